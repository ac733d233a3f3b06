"""Charts chosen by the data (issue 29), checked on the figure descriptions both renderers
draw: one x value as a dot per series, at most MAX_SERIES series a chart (facets sharing
one y range), log y axes past a decade, reference tools in their system's colour with a
mark of their own, several metrics of a series told apart without a line, PNG legends
that keep their dashes, the report's "x own tool" ratios and the Findings' columns each
saying one thing."""

import html
import re

import pytest

from msgbench.data import model, results
from msgbench.views import figures, report
from msgbench.views.report import findings, png
from msgbench.views.report import html as report_html
from tests.report.report_fixtures import measurement

PUBSUB = {"payload_bytes": 1024, "sources": 1, "source_threads": 1, "receivers": 1, "batching_bytes": 0}
FACTORS = [1, 1.004, 1.008, 0.996, 1.002]


def _doc(measurements: list[dict]) -> dict:
    run = {"id": "r1", "status": "complete", "notes": [], "metadata": {}, "measurements": measurements,
           "summary": results.summarize_run(measurements)}
    return {"format": "msgbench-results", "version": 1, "runs": [run]}


def _pubsub(target: str, rate: float, *, variant: str = "default", label: str = "idiomatic",
            reference_for=None, payloads=(1024,)) -> list[dict]:
    out = []
    for payload in payloads:
        params = PUBSUB | {"payload_bytes": payload}
        for rep, factor in enumerate(FACTORS):
            m = measurement("r1", "pubsub", "pubsub", target, variant, params, "payload_bytes", rep, False,
                            metrics={"msgs_per_s": rate * factor, "payload_bits_per_s": rate * factor * 8192},
                            label=label)
            out.append(m | ({"extra": {"reference_for": reference_for}} if reference_for else {}))
    return out


def _figures(doc: dict, workload: str) -> list[dict]:
    section = next(s for s in report_html.sections_of(doc) if s["workload"] == workload)
    return [item for item in section["items"] if item["kind"] == "xy"]


def _brokers() -> dict:
    return _doc(_pubsub("nats", 3e5) + _pubsub("redis", 3e3) + _pubsub("tcp", 6e5)
                + _pubsub("reference", 4e5, variant="nats_bench", label="reference", reference_for=["nats"])
                + _pubsub("reference", 2e4, variant="redis_benchmark", label="reference",
                          reference_for=["redis"]))


def test_one_x_value_is_a_dot_per_series_with_the_x_in_the_subtitle():
    rates = _figures(_brokers(), "pubsub")[0]
    assert rates["x"]["scale"] == figures.SERIES_SCALE
    assert rates["x"]["label"] == ""
    assert "at payload size (bytes) = 1,024" in rates["subtitle"]
    assert [t["series"] for t in rates["traces"]] == [
        "nats/default", "nats_bench", "redis/default", "redis_benchmark", "tcp/default"]  # tools by their systems


def test_a_swept_scenario_keeps_its_x_axis():
    doc = _doc(_pubsub("nats", 3e5, payloads=(64, 1024)) + _pubsub("tcp", 6e5, payloads=(64, 1024)))
    rates = _figures(doc, "pubsub")[0]
    assert rates["x"]["scale"] in ("linear", "log") and rates["x"]["label"] == "payload size (bytes)"
    assert rates["subtitle"] == ""


def test_values_spanning_a_decade_get_a_log_y_axis_and_senders_keep_a_linear_x():
    assert _figures(_brokers(), "pubsub")[0]["y"]["scale"] == "log"  # redis 3k beside tcp 600k
    steady = _doc(_pubsub("nats", 3e5) + _pubsub("tcp", 6e5))
    assert _figures(steady, "pubsub")[0]["y"]["scale"] == "linear"
    assert figures.auto_scale([10, 101]) == "log" and figures.auto_scale([10, 99]) == "linear"
    assert figures.auto_scale([1, 2, 4, 8, 16, 32, 64], figures.X_LOG_SPAN) == "linear"


def test_a_reference_tool_has_its_systems_colour_and_a_mark_no_system_has():
    traces = {t["label"]: t for t in _figures(_brokers(), "pubsub")[0]["traces"]}
    nats, tool = traces["nats/default"], traces["reference/nats_bench"]
    assert tool["measures"] == "nats" and tool["marker"] == figures.REFERENCE_MARKER
    # Same hue: the tool is a shade of nats's colour (or nats's own), never another target's.
    hues = {figures.TARGET_COLOURS["nats"]} | {figures.shade(figures.TARGET_COLOURS["nats"], a)
                                               for a in figures.SHADES if a}
    assert tool["colour"] in hues and nats["colour"] == figures.TARGET_COLOURS["nats"]
    assert traces["reference/redis_benchmark"]["colour"] != tool["colour"]
    assert all(t["marker"] != figures.REFERENCE_MARKER for t in traces.values() if not t["measures"])


def _wide_doc(targets: int) -> dict:
    names = list(figures.KNOWN_TARGETS)[:targets]
    out = []
    for i, target in enumerate(names):
        out += _pubsub(target, 1e4 * (i + 1))
    return _doc(out)


def test_more_than_eight_series_become_facets_sharing_one_y_range():
    items = _figures(_wide_doc(13), "pubsub")
    rates = [f for f in items if "message rate" in f["title"]]
    assert len(rates) == 2
    assert all(figures.series_count(f) <= figures.MAX_SERIES for f in rates)
    drawn = [t["label"] for f in rates for t in f["traces"]]
    assert sorted(drawn) == sorted(f"{t}/default" for t in figures.KNOWN_TARGETS)  # each once
    assert rates[0]["y"]["range"] == rates[1]["y"]["range"]
    low, high = rates[0]["y"]["range"]
    assert low <= 1e4 and high >= 13e4
    assert [f["facet"]["index"] for f in rates] == [1, 2] and "(1 of 2:" in rates[0]["title"]
    assert len({f["id"] for f in items}) == len(items)
    assert len(_figures(_wide_doc(8), "pubsub")) == 2  # eight fit: no facets (two panels)


def test_facets_keep_a_reference_tool_beside_the_system_it_measures():
    item = figures.xy("f", "t", x_label="x", y_label="y", traces=[
        model.trace(f"{name}/default", [model.Point(1, 1.0, 1.0, 1.0, 3, "ok", "")], target=name)
        for name in (*figures.KNOWN_TARGETS[:7], "nats")] + [
        model.trace("reference/nats_bench", [model.Point(1, 1.0, 1.0, 1.0, 3, "ok", "")],
                    target="reference") | {"measures": "nats"}])
    parts = figures.facets(item)
    assert len(parts) == 2
    with_nats = next(p for p in parts if any(t["label"] == "nats/default" for t in p["traces"]))
    assert any(t["label"] == "reference/nats_bench" for t in with_nats["traces"])


def _chat_doc() -> dict:
    params = {"groups": 10, "clients_per_group": 5, "duration_s": 1, "think_ms": 0}
    out = []
    for target, rate in (("erlang", 7e5), ("go", 8e5), ("rust", 1e6)):
        for rep, factor in enumerate(FACTORS):
            out.append(measurement("r1", "chat stress", "chat", target, "default", params, "groups", rep, False,
                                   metrics={"sent_per_s": rate * factor, "received_per_s": rate * factor * 0.99,
                                            "received_per_client_per_s": rate / 50,
                                            "sent_per_client_per_s": rate / 50}))
    return _doc(out)


def test_chat_sent_and_received_sit_side_by_side_and_look_different():
    chart = next(f for f in _figures(_chat_doc(), "chat") if "Messages per second" in f["title"])
    assert chart["x"]["scale"] == figures.SERIES_SCALE
    by_series = model.group_by(chart["traces"], lambda t: t["series"])
    assert set(by_series) == {"erlang/default", "go/default", "rust/default"}
    for traces in by_series.values():
        assert len(traces) == 2
        assert len({(t["marker"], t["line"]) for t in traces}) == 2  # sent and received apart
        assert len({t["colour"] for t in traces}) == 1  # one system, one colour


def test_no_two_traces_of_any_chart_look_alike(every_workload):
    for section in report_html.sections_of(every_workload):
        for item in section["items"]:
            if item["kind"] != "xy":
                continue
            looks = [(t["colour"], t["marker"], t["line"], t.get("series", "")) for t in item["traces"]
                     if not t.get("fixed")]
            assert len(set(looks)) == len(looks), item["title"]


def test_png_legends_keep_the_dash_of_each_metric(tmp_path):
    traces = []
    for i, (suffix, metric_y) in enumerate((("p50", 10.0), ("p99", 40.0))):
        traces.append(model.trace(f"nats/default {suffix}", [model.Point(x, metric_y * (1 + k), None, None, 3,
                                                                          "ok", "")
                                                              for k, x in enumerate((64, 1024))],
                                  target="nats", dash=i))
    item = figures.xy("lat", "latency", x_label="payload", y_label="latency (µs)", traces=traces)
    fig = png.draw(item)
    legend = fig.axes[0].get_legend()
    styles = [line.get_linestyle() for line in legend.get_lines()]
    assert styles[0] == "-" and styles[1] == "--"
    assert legend.handlelength >= 3  # long enough for a dash to show


def test_the_report_shows_each_system_against_its_own_tool():
    page = report.render_html(_brokers())
    assert "<th>x own tool</th>" in page
    row = page[page.index('data-finding="pubsub"'):]
    row = html.unescape(row[:row.index("</tr>")])
    assert "nats/default 0.75x reference/nats_bench" in row
    assert "redis/default 0.15x reference/redis_benchmark" in row


def test_the_findings_answer_and_significance_columns_each_say_one_thing():
    page = report.render_html(_brokers())
    row = page[page.index('data-finding="pubsub"'):]
    row = row[:row.index("</tr>")]
    answer = html.unescape(re.search(r'<td class="margin">(.*?)</td>', row).group(1))
    significance = html.unescape(re.search(r'<td class="(?:in)?significant">(.*?)</td>', row).group(1))
    assert answer.startswith("tcp/default ran 2.00 ± ") and answer.endswith("nats/default at payload_bytes = 1,024")
    assert "p =" not in answer and "repetitions" not in answer
    assert significance.startswith("p = ") and significance.endswith("(5 vs 5 repetitions): significant")
    assert "faster" not in significance and "nats" not in significance


@pytest.mark.parametrize(("values_a", "values_b", "answer", "test"), [
    ([100, 101, 102], [150, 151, 152], "inconclusive: too few repetitions (3 a side can never reach p<0.05)",
     "no test: 3 vs 3 repetitions"),
    ([100, 100.5, 101, 101.5, 102], [102, 101.5, 101, 100.5, 100], "no significant difference", "p = 1 "),
])
def test_without_a_leader_the_columns_still_split_claim_and_test(values_a, values_b, answer, test):
    out = []
    for target, values in (("go", values_a), ("erlang", values_b)):
        for rep, value in enumerate(values):
            out.append(measurement("r1", "fanin", "fanin", target, "default",
                                   {"senders": 4, "duration_ms": 200,
                                    "mix": [{"percent": 100, "kind": "message", "size": 1}]},
                                   "senders", rep, False, metrics={"receive_throughput_per_s": value}))
    [f] = findings.findings(_doc(out))
    assert f.margin_text().startswith(answer) and "p =" not in f.margin_text()
    assert f.significance_text().startswith(test)


def test_realistic_chat_opens_on_the_latency_it_is_judged_by():
    params = {"groups": 5, "clients_per_group": 4, "duration_s": 2, "think_ms": 200}
    out = [measurement("r1", "chat", "chat", target, "default", params, "groups", rep, False,
                       metrics={"sent_per_s": 100.0, "received_per_s": 99.0, "latency_p50_us": p99 / 6,
                                "latency_p99_us": p99 * factor, "achieved_send_ratio": 1.0})
           for target, p99 in (("erlang", 6e3), ("rust", 1.5e4)) for rep, factor in enumerate(FACTORS)]
    first = _figures(_doc(out), "chat")[0]
    assert "Delivery latency" in first["title"]


def test_the_findings_loss_is_a_share_with_its_series():
    lossy = _pubsub("mqtt", 4e4, variant="qos0")
    for m in lossy:
        m["metrics"]["loss_ratio"] = 0.812
    page = report.render_html(_doc(lossy + _pubsub("nats", 3e5)))
    row = page[page.index('data-finding="pubsub"'):]
    assert "<td>81.2% (mqtt/qos0)</td>" in row[:row.index("</tr>")]


def test_a_measurements_parts_are_never_faceted_by_target():
    traces = [model.trace(f"kind_{i}", [model.Point(t, float(i + t), status="ok") for t in (0, 1)])
              for i in range(10)]
    item = figures.xy("s", "memory over time", x_label="t", y_label="bytes", traces=traces, keep_colours=True)
    assert figures.facets(item) == [item]


def test_the_page_draws_by_default_what_the_findings_judge():
    from msgbench.views.web import shape

    params = {"groups": 5, "clients_per_group": 4, "duration_s": 2, "think_ms": 200}
    out = [measurement("r1", "chat", "chat", "erlang", "default", params, None, rep, False,
                       metrics={"received_per_s": 99.0, "latency_p99_us": 6e3, "achieved_send_ratio": 1.0})
           for rep in range(3)]
    graphs = shape.from_document(_doc(out), "Ver: 1")["graphs"]
    primary = {g["key"].rsplit("|", 1)[1] for g in graphs if g["primary"]}
    assert primary == {"latency_p99_us", "achieved_send_ratio"}  # realistic chat: not the offered load
    brokers = shape.from_document(_brokers(), "Ver: 1")["graphs"]
    rates = next(g for g in brokers if g["primary"])
    assert [s["label"] for s in rates["series"]][:2] == ["nats/default", "reference/nats_bench"]
