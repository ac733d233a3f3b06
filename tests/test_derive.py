"""The spec derives every metric from a worker's raw facts; workers compute none."""

import pytest

from msgbench.core import expr, histogram, spec


def verify_names(wl: spec.Workload) -> set[str]:
    return set().union(*(expr.names_in(rule["rule"]) for rule in wl.verify_rules)) - set(wl.params)


@pytest.mark.parametrize("name", sorted(spec.workloads()))
def test_every_metric_has_a_formula_over_known_names(name):
    wl = spec.workload(name)
    known = set(wl.params) | set(wl.measured) | set(wl.histograms) | set(wl.metrics) | verify_names(wl)
    known |= {"users", "sent", "received", "published", "lost", "receivers"}  # verify counts some rules do not name
    for metric, definition in wl.metrics.items():
        assert "formula" in definition, metric
        assert expr.names_in(definition["formula"]) <= known, (metric, expr.names_in(definition["formula"]) - known)


def derive(name: str, measured: dict, verify: dict, histograms=None, **params) -> dict:
    wl = spec.workload(name)
    return spec.derive_metrics(wl, spec.resolve_params(wl, params), measured, verify, histograms or {})


def test_ring():
    m = derive("ring", {"create_wall_ns": 2_000_000, "create_cpu_ns": 1_000_000, "pass_wall_ns": 500_000_000,
                        "pass_cpu_ns": 400_000_000, "peak_rss_bytes": 4096},
               {"hops": 10_000, "laps": 10, "links": 1000}, n=1000, m=10)
    assert m == {"create_wall_ms": 2.0, "create_cpu_ms": 1.0, "pass_wall_ms": 500.0, "pass_cpu_ms": 400.0,
                 "hops_per_s": 20_000.0, "spawns_per_s": 500_000.0, "peak_rss_bytes": 4096}


def test_fanin_both_methods():
    facts = {"send_ns": 1_250_000_000, "receive_ns": 2_000_000_000, "drain_ns": 1_250_700_000,
             "cpu_ns": 3_000_000, "peak_rss_bytes": 1}
    counts = {"sent_message": 1000, "sent_exit_signal": 0, "received_message": 1000, "received_exit_signal": 0,
              "receiver_alive": 1}
    ours = derive("fanin", facts, counts, duration_ms=1000)
    assert ours["send_throughput_per_s"] == 800 and ours["send_duration_ms"] == 1250
    assert ours["receive_throughput_per_s"] == 500 and ours["drain_ms"] == 1250.7
    otp = derive("fanin", facts, counts, duration_ms=1000, method="otp")
    assert otp["send_duration_ms"] == 1000 and otp["send_throughput_per_s"] == 1000
    assert otp["receive_duration_ms"] == 2250 and otp["receive_throughput_per_s"] == 1000 / 2.25  # whole ms drain


def test_socket_means_over_sockets_and_rates_over_the_wall():
    m = derive("socket", {"elapsed_ns": [1_000_000, 3_000_000], "wall_ns": 4_000_000, "peak_rss_bytes": 1},
               {"messages_sent": 2000, "messages_received": 2000, "bytes_sent": 2_048_000,
                "bytes_received": 2_048_000, "content_mismatches": 0},
               size=1024, total_bytes=1_024_000, sockets=2)
    assert m["elapsed_ms"] == 2.0 and m["round_trip_us"] == 2.0  # 2 ms / 1000 messages
    assert m["bandwidth_bytes_per_s"] == 512_000_000 and m["msgs_per_s"] == 500_000


def test_socket_round_trip_divides_by_the_round_trips_made_not_by_total_bytes():
    # sockperf runs for a time: 1.55 s of valid duration and the round trips it counted in it
    m = derive("socket", {"elapsed_ns": [1_550_000_000], "wall_ns": 1_550_000_000, "peak_rss_bytes": 1},
               {"messages_sent": 20_000, "messages_received": 20_000, "bytes_sent": 320_000,
                "bytes_received": 320_000, "content_mismatches": 0},
               size=16, total_bytes=1_048_576, sockets=1)
    assert m["round_trip_us"] == 77.5  # 1.55 s / 20,000, not 1.55 s / 65,536


def test_pubsub_rate_per_receiver_and_latency_from_the_histogram():
    latencies = [1000] * 99 + [49_800]
    m = derive("pubsub", {"publish_ns": 10**9, "source_cpu_ns": 5 * 10**8, "receiver_cpu_ns": 10**8,
                          "peak_rss_bytes": 1, "receiver_received": [100, 1], "receiver_first_ns": [0, 7],
                          "receiver_last_ns": [10**8, 7], "latency_max_ns": 49_800},
               {"published": 100, "received": 101, "undelivered": 0, "lost": 99, "receivers": 2, "out_of_order": 0,
                "duplicates": 0, "corrupt": 0, "dropped": 0, "lossless": 0},
               {"latency_ns": histogram.record(latencies)}, rate=100, payload_bytes=64, receivers=2)
    assert m["msgs_per_s"] == 500  # (100 / 0.1 s + 0) / 2: one message has no span
    assert m["payload_bits_per_s"] == 500 * 64 * 8 and m["publish_msgs_per_s"] == 100
    assert m["loss_ratio"] == 99 / 200 and m["undelivered_ratio"] == 0 and m["source_cpu_ms"] == 500
    assert m["latency_p50_us"] == 1.0035 and m["latency_max_us"] == 49.8  # 1000 ns lies in [1000, 1008)
    assert m["latency_p999_us"] == 49.8  # [49664, 50176): its midpoint is capped at the measured maximum
    assert "broker_cpu_ms" not in m  # optional: the harness measures it


def test_pubsub_latency_only_when_a_rate_is_set():
    m = derive("pubsub", {"publish_ns": 10**9, "source_cpu_ns": 1, "receiver_cpu_ns": 1, "peak_rss_bytes": 1,
                          "receiver_received": [2], "receiver_first_ns": [0], "receiver_last_ns": [10**9],
                          "broker_cpu_ns": 2_000_000},
               {"published": 2, "received": 2, "undelivered": 0, "lost": 0, "receivers": 1}, rate=0)
    assert "latency_p50_us" not in m and m["broker_cpu_ms"] == 2.0


def pubsub_counts(**counts) -> dict:
    return {"published": 10_000, "receivers": 2, "out_of_order": 0, "duplicates": 0, "corrupt": 0, "dropped": 0,
            "lossless": 1} | counts


def test_pubsub_messages_still_queued_in_the_broker_are_undelivered_not_lost():
    # A lossless RabbitMQ whose receivers stopped waiting with 4,293 messages still in its queues.
    wl = spec.workload("pubsub")
    params = spec.resolve_params(wl, {})
    held = pubsub_counts(received=20_000 - 4293, undelivered=4293, lost=0)
    assert spec.failed_rules(wl, params, held) == []
    m = derive("pubsub", {"publish_ns": 10**9, "source_cpu_ns": 1, "receiver_cpu_ns": 1, "peak_rss_bytes": 1,
                          "receiver_received": [10_000, 10_000 - 4293], "receiver_first_ns": [0, 0],
                          "receiver_last_ns": [10**9, 10**9]}, held, rate=0)
    assert m["undelivered_ratio"] == 4293 / 20_000 and m["loss_ratio"] == 0
    # The same messages missing and not held by the broker: lost, and a lossless variant fails.
    failures = spec.failed_rules(wl, params, pubsub_counts(received=20_000 - 4293, undelivered=0, lost=4293))
    assert failures == ["lossless == 0 or lost == 0 does not hold (lossless=1, lost=4293)"]
    # Counts that do not add up fail, however the worker splits them.
    assert spec.failed_rules(wl, params, pubsub_counts(received=19_900, undelivered=50, lost=0)) == [
        "received + undelivered + lost == published * receivers does not hold "
        "(lost=0, published=10000, received=19900, receivers=2, undelivered=50)"]


def test_chat_seed_block():
    m = derive("chat", {"setup_ns": 10**6, "send_window_ns": 2 * 10**9, "drain_ns": 10**7, "received_in_window": 80,
                        "processes_count": 50, "peak_rss_bytes": 8000, "runtime_memory_bytes": 7000,
                        "latency_max_ns": 0},
               {"sent": 100, "received": 100, "cross_group": 0, "self_deliveries": 0, "users": 8},
               {"latency_ns": []}, groups=2, clients_per_group=4)
    assert m["sent_per_s"] == 50 and m["received_per_s"] == 40 and m["received_per_group_count"] == 40
    assert m["sent_per_client_per_s"] == 50 / 8 and m["memory_per_user_bytes"] == 1000
    assert m["latency_p50_us"] == 0 and m["latency_max_us"] == 0  # nothing measured: an empty histogram


def test_a_missing_raw_fact_is_named():
    with pytest.raises(spec.DeriveError, match="did not report pass_wall_ns"):
        derive("ring", {"create_wall_ns": 1, "create_cpu_ns": 1, "pass_cpu_ns": 1, "peak_rss_bytes": 1},
               {"hops": 1, "laps": 1, "links": 1})


def test_a_formula_that_fails_on_the_facts_is_named():
    with pytest.raises(spec.DeriveError, match="mean\\(\\) of no values"):
        derive("socket", {"elapsed_ns": [], "wall_ns": 1, "peak_rss_bytes": 1},
               {"messages_received": 0, "bytes_received": 0})


def test_measured_problems_name_unknown_missing_and_misshapen_facts():
    wl = spec.workload("socket")
    problems = spec.measured_problems(wl, {"elapsed_ns": 5, "wall_ms": 1, "peak_rss_bytes": 1},
                                      {"connect_ns": [[1, 1]]})
    assert any("elapsed_ns must be a list" in p for p in problems)
    assert any("wall_ms is not a raw fact of socket" in p for p in problems)
    assert any("wall_ns missing" in p for p in problems)
    assert any("histogram connect_ns is not one of socket's" in p for p in problems)
    assert spec.measured_problems(wl, {"elapsed_ns": [5], "wall_ns": 5, "peak_rss_bytes": 1}, {}) == []


@pytest.mark.parametrize(("name", "params", "message"), [
    ("socket", {"size": 4096, "total_bytes": 1024},
     "size = 4096 and total_bytes = 1024: socket requires size <= total_bytes"),
    ("pubsub", {"sources": 1, "source_threads": 2},
     "source_threads = 2 and sources = 1: pubsub requires source_threads <= sources"),
])
def test_cross_parameter_rules_are_the_harness_s(name, params, message):
    with pytest.raises(spec.ParamError, match=message):
        spec.resolve_params(spec.workload(name), params)
