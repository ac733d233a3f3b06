"""Data shaping: summaries into points and traces, n/a and failed never as numbers."""

import pytest

from msgbench.data import model
from msgbench.views import figures, workloads
from msgbench.views.report import html


def entries(doc, workload):
    return next(d for d in model.collect(doc) if d.workload == workload)


def test_sections_come_in_seed_order_then_alphabetical(one_run):
    assert [d.workload for d in model.collect(one_run, workloads.order)] == ["ring", "fanin", "socket"]
    assert workloads.order(["zeta", "chat", "alpha", "ring"]) == ["ring", "chat", "alpha", "zeta"]


def test_warmups_are_not_summarised(one_run):
    ring = entries(one_run, "ring")
    ok = [e for e in ring.entries if e.status == "ok"]
    assert {e.summary["metrics"]["pass_wall_ms"]["n"] for e in ok} == {3}


def test_point_of_an_ok_summary_has_median_and_spread(one_run):
    entry = entries(one_run, "ring").entries[0]
    stats = entry.summary["metrics"]["hops_per_s"]
    point = model.point_of(entry, "hops_per_s", 1000)
    assert (point.y, point.lo, point.hi, point.n, point.status) == (
        stats["median"], stats["min"], stats["max"], 3, "ok")


@pytest.mark.parametrize(("target", "status"), [("go", "unsupported"), ("c", "failed")])
def test_points_without_numbers_keep_their_status_and_no_value(one_run, target, status):
    fanin = entries(one_run, "fanin")
    bad = [e for e in fanin.entries if e.summary["target"] == target and e.status != "ok"]
    assert bad, "the fixture has such a point"
    point = model.point_of(bad[0], "receive_throughput_per_s", 1)
    assert point.status == status
    assert point.y is None and point.lo is None and point.hi is None
    assert "go has no equivalent" in point.note or "received_message" in point.note


def test_a_missing_entry_is_missing_not_zero():
    point = model.point_of(None, "hops_per_s", 5)
    assert point == model.Point(5, None, status="missing")


def test_warnings_about_other_metrics_stay_off_a_point():
    summary = {"workload": "w", "scenario": "s", "target": "t", "variant": "v", "status": "ok",
               "ok": 3, "total": 3, "warnings": ["a_ms: too noisy", "b_ms: too noisy", "1 of 3"],
               "metrics": {"a_ms": {"median": 1, "n": 3}, "b_ms": {"median": 2, "n": 3}}}
    entry = model.Entry(model.RunInfo(0, "r", "r"), summary)
    assert model.point_of(entry, "a_ms", 1).note == "a_ms: too noisy; 1 of 3"


def test_pool_takes_median_of_medians_and_widest_spread():
    points = [model.Point(1, 10.0, 9.0, 11.0, 3), model.Point(1, 20.0, 18.0, 25.0, 3),
              model.Point(1, 12.0, 7.0, 13.0, 3), model.Point(1, None, status="timeout")]
    pooled = model.pool(points, 1)
    assert (pooled.y, pooled.lo, pooled.hi, pooled.n, pooled.status) == (12.0, 7.0, 25.0, 9, "ok")


def test_pool_of_only_failed_points_is_failed():
    pooled = model.pool([model.Point(1, None, status="timeout", note="slow")], 1)
    assert pooled.status == "timeout" and pooled.y is None


def test_series_traces_align_every_series_on_the_union_of_x(one_run):
    socket = entries(one_run, "socket")
    traces = model.series_traces(socket, socket.entries, "round_trip_us")
    assert [t["label"] for t in traces] == ["erlang/default"]
    assert traces[0]["x"] == [64, 1024, 16384, 262144]
    assert all(s == "ok" for s in traces[0]["status"])


def test_labels_name_the_run_only_when_there_are_several(one_run, two_runs):
    assert model.series_label(entries(one_run, "ring").entries[0], False) == "erlang/default"
    ring = entries(two_runs, "ring")
    assert ring.multi_run
    assert ring.label(ring.entries[-1]) == "20261123-090000-b71c c/default"


def test_summaries_are_computed_when_a_document_has_none(one_run):
    for run in one_run["runs"]:
        run["summary"] = []
    ring = entries(one_run, "ring")
    assert len(ring.entries) == 3 * 2 * 5
    timeouts = [e for e in ring.entries if e.status == "timeout"]
    assert len(timeouts) == 1


def test_distinguishing_keeps_only_params_that_vary():
    sets = [{"m": 10, "payload": "BOO!"}, {"m": 100, "payload": "BOO!"}]
    assert model.distinguishing(sets) == [{"m": 10}, {"m": 100}]
    assert model.distinguishing([{"a": 1}]) == [{}]


def test_describe_params_writes_mixes_compactly():
    mix = [{"percent": 50, "kind": "exit_signal", "size": 10},
           {"percent": 50, "kind": "message", "size": 10}]
    assert model.describe_params({"mix": mix, "n": 3}) == "mix=50%exit_signal:10+50%message:10, n=3"


@pytest.mark.parametrize(("values", "scale"), [
    ([1000, 5000, 100000], "log"), ([1, 2, 4, 8], "linear"), ([0, 10, 1e6], "linear"),
    ([None, 3, 300], "log"), ([], "linear"), ([3e3, 6e5], "log"),
])
def test_log_scale_only_where_positive_data_spans_a_decade(values, scale):
    assert figures.auto_scale(values) == scale


def test_an_x_axis_turns_log_only_past_two_decades():
    assert figures.auto_scale([1, 2, 4, 64], figures.X_LOG_SPAN) == "linear"
    assert figures.auto_scale([1000, 100000], figures.X_LOG_SPAN) == "log"


@pytest.mark.parametrize(("metric", "label"), [
    ("hops_per_s", "hops (/s)"), ("pass_wall_ms", "pass wall (ms)"),
    ("peak_rss_bytes", "peak rss (bytes)"), ("round_trip_us", "round trip (µs)"), ("loss", "loss"),
])
def test_metric_labels_carry_the_unit(metric, label):
    assert figures.metric_label(metric) == label


@pytest.mark.parametrize(("value", "text"), [
    (1411.4, "1,411"), (135.2, "135"), (13.94, "13.9"), (0.01234, "0.0123"), (None, "—"),
])
def test_table_numbers(value, text):
    assert figures.format_value(value) == text


@pytest.mark.parametrize(("status", "text"), [
    ("unsupported", "n/a"), ("failed", "failed"), ("timeout", "failed (timeout)"),
])
def test_status_text(status, text):
    assert figures.status_text(status) == text


def test_no_two_traces_of_one_chart_look_alike(every_workload):
    """Colour (target and shade), marker (run) and line (run, or a second metric) together
    tell every line of a chart apart: chat's sent and received of one target share its
    colour and differ by dash; two runs of one target differ by marker."""
    checked = 0
    for section in html.sections_of(every_workload):
        for item in section["items"]:
            if item["kind"] != "xy":
                continue
            looks = [(t["colour"], t["marker"], t["line"]) for t in item["traces"]]
            assert len(set(looks)) == len(looks), item["title"]
            checked += 1
    assert checked > 10


def test_one_colour_per_target_in_every_chart_and_run(every_workload):
    colours: dict = {}
    for section in html.sections_of(every_workload):
        for item in section["items"]:
            for t in item.get("traces", []):
                if "colour" in t:
                    colours.setdefault((t["target"], t["member"]), set()).add(t["colour"])
    assert {target for target, _ in colours} == {"erlang", "go", "c", "tcp"}
    assert all(len(c) == 1 for c in colours.values()), colours
    assert colours["erlang", "default"] == {figures.TARGET_COLOURS["erlang"]}


def test_colours_do_not_depend_on_order_and_unknown_targets_hash_stably():
    def traces(*targets):
        return [model.trace(f"{t}/default", [model.Point(1, 1.0)], target=t, member="default")
                for t in targets]
    first = {t["target"]: t["colour"] for t in figures.style(traces("go", "erlang", "zig"))}
    again = {t["target"]: t["colour"] for t in figures.style(traces("zig", "erlang", "go"))}
    assert first == again
    assert first["zig"] in figures.OTHER_PALETTE
    assert len(set(figures.TARGET_PALETTE)) == len(figures.KNOWN_TARGETS)


def test_variants_are_shades_of_the_target_and_runs_differ_by_marker_and_dash():
    def t(variant, source):
        return model.trace(f"{source} rust/{variant}", [model.Point(1, 1.0)], target="rust",
                           member=variant, source=source)
    traces = figures.style([t("tokio", "run1"), t("threads", "run1"), t("tokio", "run2")])
    assert traces[0]["colour"] != traces[1]["colour"]
    assert traces[0]["colour"] == traces[2]["colour"]  # the same variant in another run
    assert traces[0]["marker"] == traces[1]["marker"] != traces[2]["marker"]
    assert traces[0]["line"] == "solid" and traces[2]["line"] == "dotted"


@pytest.mark.parametrize(("unit", "values", "label", "first"), [
    ("µs", [20.0, 900.0], "latency (µs)", 20.0),
    ("µs", [20.0, 90_000.0], "latency (ms)", 0.02),
    ("ms", [5.0, 50_000.0], "latency (s)", 0.005),
    ("ns", [1.0, 2e10], "latency (s)", 1e-9),
])
def test_times_are_drawn_in_a_unit_that_keeps_numbers_short(unit, values, label, first):
    trace = model.trace("a", [model.Point(i, v, v, v) for i, v in enumerate(values)])
    figure = figures.xy("f", "t", x_label="x", y_label=f"latency ({unit})", traces=[trace])
    assert figure["y"]["label"] == label
    assert figure["traces"][0]["y"][0] == pytest.approx(first)
    assert figure["traces"][0]["lo"][0] == pytest.approx(first)


def test_builds_of_one_target_share_its_colour_and_differ_by_marker():
    """Two builds of erlang interleaved in one run (the OTP page's master vs a branch)."""
    from tests.report.test_sections import doc_of, point
    points = []
    for build, speed in (("master", 1.0), ("branch", 1.2)):
        for senders in (1, 2, 4):
            p = point("fanin", "fanin-message-1", {"senders": senders, "mix": [
                {"percent": 100, "kind": "message", "size": 1}], "duration_ms": 1000},
                {"receive_throughput_per_s": 1e6 * senders * speed,
                 "send_throughput_per_s": 2e6 * senders * speed})
            p.update(build=build, sweep="senders", x=senders)
            points.append(p)
    section = next(s for s in html.sections_of(doc_of(points)) if s["workload"] == "fanin")
    traces = section["items"][0]["traces"]
    assert [t["label"] for t in traces] == ["erlang@master/default", "erlang@branch/default"]
    assert traces[0]["colour"] == traces[1]["colour"] == figures.TARGET_COLOURS["erlang"]
    assert (traces[0]["marker"], traces[0]["line"]) != (traces[1]["marker"], traces[1]["line"])
    assert section["items"][0]["sources"] == ["build master", "build branch"]
