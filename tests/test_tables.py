"""The terminal table's reference column and the warnings a summary carries."""

import statistics

from msgbench.data import results
from msgbench.views import screen

ABOVE_ONE = "x reference = the tool's performance reached, above 1.00x better than it"


def summary(target, variant, label, median, **extra):
    return {"scenario": "pubsub", "workload": "pubsub", "target": target, "variant": variant,
            "variant_label": label, "params": {"payload_bytes": 16}, "sweep": "payload_bytes", "x": 16,
            "status": "ok", "ok": 3, "total": 3, "warnings": [],
            "metrics": {"msgs_per_s": {"median": median, "min": median, "max": median, "cv": 0.0, "n": 3}},
            **extra}


def test_a_reference_for_one_system_is_compared_with_that_system_only():
    rows = [summary("nats", "default", "idiomatic", 900.0),
            summary("redis", "default", "idiomatic", 300.0),
            summary("reference", "nats_bench", "reference", 1000.0, reference_for=["nats"]),
            summary("reference", "redis_benchmark", "reference", 600.0, reference_for=["redis"])]
    [table] = screen.summary_tables(rows)
    ratio = {row[table.headers.index("target/variant")]: row[table.headers.index("x reference")] for row in table.rows}
    assert ratio["nats/default"] == "0.90x"
    assert ratio["redis/default"] == "0.50x"


def test_the_legend_names_the_tool_each_ratio_is_against():
    rows = [summary("nats", "default", "idiomatic", 900.0), summary("redis", "lean", "tuned", 700.0),
            summary("reference", "nats_bench", "reference", 1000.0, reference_for=["nats"]),
            summary("reference", "redis_benchmark", "reference", 800.0, reference_for=["redis"]),
            summary("reference", "redis_benchmark_sub", "reference", 600.0, reference_for=["redis"]),
            summary("reference", "perftest", "reference", 5.0, reference_for=["rabbitmq"])]
    [table] = screen.summary_tables(rows)
    ratio = {row[table.headers.index("target/variant")]: row[table.headers.index("x reference")] for row in table.rows}
    assert ratio["redis/lean"] == "1.17x"  # against the fair pairing, stored last
    # rabbitmq was not measured: its tool is no pairing of this table.
    assert screen.legend(rows) == (f"{ABOVE_ONE}; nats against reference/nats_bench; "
                                   "redis against reference/redis_benchmark_sub")


def test_a_reference_for_everyone_applies_to_every_target():
    rows = [summary("c", "default", "idiomatic", 50.0), summary("go", "default", "idiomatic", 25.0),
            summary("reference", "iperf3", "reference", 100.0)]
    [table] = screen.summary_tables(rows)
    assert [row[table.headers.index("x reference")] for row in table.rows[:2]] == ["0.50x", "0.25x"]
    assert screen.legend(rows) == f"{ABOVE_ONE}; every target against reference/iperf3"


def test_a_reference_for_one_variant_is_that_variants_only():
    # c/tuned pins its pairs: its ratio is against sockperf pinned alike, c/default's against plain sockperf
    rows = [summary("c", "default", "idiomatic", 50.0), summary("c", "tuned", "tuned", 20.0),
            summary("go", "default", "idiomatic", 60.0),
            summary("reference", "sockperf", "reference", 100.0),
            summary("reference", "sockperf_pinned", "reference", 40.0, reference_for=["c/tuned"])]
    [table] = screen.summary_tables(rows)
    ratio = {row[table.headers.index("target/variant")]: row[table.headers.index("x reference")] for row in table.rows}
    assert ratio["c/default"] == "0.50x" and ratio["go/default"] == "0.60x"
    assert ratio["c/tuned"] == "0.50x"
    assert ratio["reference/sockperf_pinned"] == ""  # a tool is the yardstick, not compared


def echo(variant, label, round_trip_us, **extra):
    return {**summary("c", variant, label, 0.0, **extra), "workload": "socket", "scenario": "echo",
            "params": {"mode": "echo", "size": 16}, "sweep": None, "x": None,
            "metrics": {"round_trip_us": {"median": round_trip_us, "min": round_trip_us,
                                          "max": round_trip_us, "cv": 0.0, "n": 3}}}


def test_a_shorter_round_trip_than_the_tools_reads_above_one():
    rows = [echo("default", "idiomatic", 50.0), echo("tuned", "tuned", 20.0),
            {**echo("sockperf", "reference", 100.0), "target": "reference"},
            {**echo("sockperf_pinned", "reference", 10.0, reference_for=["c/tuned"]), "target": "reference"}]
    [table] = screen.summary_tables(rows)
    ratio = {row[table.headers.index("target/variant")]: row[table.headers.index("x reference")] for row in table.rows}
    assert ratio["c/default"] == "2.00x"  # half sockperf's round trip: twice its speed
    assert ratio["c/tuned"] == "0.50x"  # twice the pinned sockperf's round trip
    assert screen.legend(rows) == (f"{ABOVE_ONE}; every other target against reference/sockperf; "
                                   "c/tuned against reference/sockperf_pinned")
    only_tuned = [rows[1], *rows[2:]]  # c/tuned alone: sockperf is nobody's yardstick
    assert screen.legend(only_tuned) == f"{ABOVE_ONE}; c/tuned against reference/sockperf_pinned"


def measurement(loss_ratio, repetition):
    return {"scenario": "pubsub", "workload": "pubsub", "target": "zeromq", "variant": "default",
            "variant_label": "idiomatic", "params": {"payload_bytes": 16}, "sweep": "payload_bytes",
            "x": 16, "repetition": repetition, "warmup": False, "status": "ok", "error": None,
            "metrics": {"msgs_per_s": 1000.0, "loss_ratio": loss_ratio}, "verify": {}, "extra": {}}


def test_loss_is_said_in_the_summary_even_when_the_median_is_zero():
    lossy = results.summarize_run([measurement(0.0, 1), measurement(0.0, 2), measurement(0.25, 3)])
    assert any(w.startswith("loss_ratio: up to 0.25 (messages were lost") for w in lossy[0]["warnings"])
    clean = results.summarize_run([measurement(0.0, 1), measurement(0.0, 2)])
    assert not any("loss_ratio" in w for w in clean[0]["warnings"])


def with_values(row, values):
    (name, stats), = row["metrics"].items()
    return {**row, "metrics": {name: {**stats, "median": statistics.median(values), "values": values}}}


def test_a_ratio_the_repetitions_cannot_tell_from_the_tools_is_marked_within_the_noise():
    apart = [echo("default", "idiomatic", 50.0), {**echo("sockperf", "reference", 55.0), "target": "reference"}]
    apart = [with_values(apart[0], [49.0, 50.0, 50.5, 51.0, 50.2]),
             with_values(apart[1], [54.0, 55.0, 55.5, 56.0, 55.2])]
    [table] = screen.summary_tables(apart)
    assert table.rows[0][table.headers.index("x reference")] == "1.10x"  # every repetition shorter: p = 0.008
    assert screen.WITHIN_NOISE not in screen.legend(apart)
    mixed = [with_values(apart[0], [49.0, 56.0, 50.5, 54.0, 50.2]),
             with_values(apart[1], [54.0, 49.5, 55.5, 50.0, 55.2])]
    [table] = screen.summary_tables(mixed)
    assert table.rows[0][table.headers.index("x reference")] == f"1.07x {screen.WITHIN_NOISE}"
    assert f"{screen.WITHIN_NOISE} = within the noise" in screen.legend(mixed)


def test_a_summary_without_its_values_gets_no_noise_mark():
    rows = [with_values(echo("default", "idiomatic", 50.0), [49.0, 56.0, 50.5]),
            {**echo("sockperf", "reference", 55.0), "target": "reference"}]  # an older document
    [table] = screen.summary_tables(rows)
    assert table.rows[0][table.headers.index("x reference")] == "1.09x"


def test_a_summary_keeps_its_repetitions_values_in_order():
    [point] = results.summarize_run([measurement(0.0, 1), measurement(0.5, 2), measurement(0.25, 3)])
    assert point["metrics"]["loss_ratio"]["values"] == [0.0, 0.5, 0.25]
