"""A point's latency percentiles come from all its repetitions' messages at once: their
histograms added bucket by bucket, never their percentiles averaged or taken the median of."""

from msgbench.core import histogram, spec
from msgbench.data import results
from msgbench.views import screen

PUBSUB = spec.workload("pubsub")
PARAMS = spec.resolve_params(PUBSUB, {"rate": 1000, "payload_bytes": 1024})
FAST, SLOW = 100_000, 10_000_000  # ns: 100 us, 10 ms


def _repetition(i: int, latencies: list[int]) -> dict:
    """A stored measurement as the runner makes it: metrics derived from the raw facts."""
    measured = {"publish_ns": 10**9, "source_cpu_ns": 1, "receiver_cpu_ns": 1, "peak_rss_bytes": 1,
                "receiver_received": [len(latencies)], "receiver_first_ns": [0], "receiver_last_ns": [10**9],
                "latency_max_ns": max(latencies)}
    verify = {"published": len(latencies), "receivers": 1, "received": len(latencies), "lost": 0,
              "undelivered": 0, "duplicates": 0, "out_of_order": 0, "corrupt": 0, "dropped": 0}
    hists = {"latency_ns": histogram.record(latencies)}
    metrics = spec.derive_metrics(PUBSUB, PARAMS, measured, verify, hists)
    return {"scenario": "pubsub", "workload": "pubsub", "target": "nats", "build": "", "variant": "default",
            "variant_label": "idiomatic", "params": PARAMS, "sweep": None, "x": None, "repetition": i,
            "warmup": False, "status": "ok", "error": None, "metrics": metrics, "verify": verify,
            "worker": {"measured": measured, "histograms": hists}}


def _point(*repetitions) -> dict:
    [summary] = results.summarize_run([_repetition(i, r) for i, r in enumerate(repetitions)])
    return summary


def test_a_tail_in_one_repetition_of_three_is_the_points_p99_not_hidden_by_the_median():
    # Two calm repetitions, one with 50 slow messages of 1,050 (4.8%): each repetition's p99 is
    # 100 us, 100 us and 10 ms, so their median says 100 us; of all 3,050 messages 1.6% are slow,
    # so the point's p99 is 10 ms.
    point = _point([FAST] * 1000, [FAST] * 1000 + [SLOW] * 50, [FAST] * 1000)
    p99 = point["metrics"]["latency_p99_us"]
    assert abs(p99["median"] - 100) / 100 < 0.02
    assert abs(p99["merged"] - 10_000) / 10_000 < 0.02
    assert results.point_value(p99) == p99["merged"]
    # The largest latency of the point is the largest of all its messages, not a median.
    assert point["metrics"]["latency_max_us"]["merged"] == SLOW / 1e3
    # The p50 merges too, and agrees with every repetition here.
    assert abs(point["metrics"]["latency_p50_us"]["merged"] - 100) / 100 < 0.02


def test_the_merged_percentile_never_exceeds_the_largest_value_measured():
    point = _point([FAST] * 99 + [SLOW], [FAST] * 100)
    assert point["metrics"]["latency_p999_us"]["merged"] <= SLOW / 1e3


def test_rates_are_not_merged_their_median_stands():
    point = _point([FAST] * 100, [FAST] * 200)
    assert "merged" not in point["metrics"]["msgs_per_s"]
    assert results.point_value(point["metrics"]["msgs_per_s"]) == point["metrics"]["msgs_per_s"]["median"]


def test_an_import_without_histograms_keeps_its_medians():
    reps = [_repetition(i, [FAST] * 100) for i in range(2)]
    for m in reps:
        m["worker"] = None  # as a run imported from another tool's format stores it
    [point] = results.summarize_run(reps)
    assert "merged" not in point["metrics"]["latency_p99_us"]


def test_a_fact_without_a_merge_rule_keeps_a_metric_from_merging():
    measured = dict(PUBSUB.measured)
    measured["latency_max_ns"] = {k: v for k, v in measured["latency_max_ns"].items() if k != "merge"}
    wl = spec.Workload(**{**PUBSUB.__dict__, "measured": measured})
    runs = [(r["worker"]["measured"], r["worker"]["histograms"]) for r in
            (_repetition(0, [FAST] * 10), _repetition(1, [SLOW] * 10))]
    assert "latency_p99_us" not in spec.merged_metrics(wl, PARAMS, runs)
    assert "latency_p99_us" in spec.merged_metrics(PUBSUB, PARAMS, runs)


def test_the_terminal_table_shows_the_merged_p99():
    point = _point([FAST] * 1000, [FAST] * 1000 + [SLOW] * 50, [FAST] * 1000)
    [table] = screen.summary_tables([point])
    row = table.rows[0]
    assert "every repetition's messages" in table.title
    assert row[table.headers.index("p99")] == "10 ms", row  # the median of the repetitions' p99 is 100 us
