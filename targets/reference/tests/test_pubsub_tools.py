"""The pubsub reference tools: their output parsers on captured real outputs, the parameter mapping,
and (where the tool and its broker are installed) one small measurement each through the real
protocol, with the broker started by msgbench's own services module as the harness does.

Captured outputs (tests/data/): nats bench v0.1.5 (--sub 2 and --pub 2 as two processes, 64-byte
messages), redis-benchmark 7.0.15 (PUBLISH, -c 2 --threads 2, with its \\r progress lines), and
PerfTest 2.22.1 (-x 2 -y 2 with -C/-D counts, and -x 1 -y 1 -z 1), Kafka 4.4.0's kafka-producer-perf-test
(12,000 records of 100 bytes, 2,000 of them --warmup-records, acks=1) and kafka-consumer-perf-test
(--show-detailed-stats --reporting-interval 1, 3,000 records of 64 bytes), all against local brokers.
"""

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path
from types import SimpleNamespace

import pytest

FOLDER = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
sys.path.insert(0, str(FOLDER))
import pubsub_tools as tools  # noqa: E402

SPEC = json.loads((FOLDER.parent.parent / "spec" / "workloads" / "pubsub.json").read_text())
TOML = tomllib.loads((FOLDER / "target.toml").read_text())
DEFAULTS = {name: body["default"] for name, body in SPEC["params"].items()}
SMALL = {"payload_bytes": 64, "duration_s": 0.3, "drain_ms": 500}


BROKER = {"nats_bench": "nats", "nats_bench_js": "jetstream", "nats_bench_js_sync": "jetstream",
          "redis_benchmark": "redis", "redis_benchmark_sub": "redis", "perftest": "rabbitmq",
          "kafka_perf": "kafka", "kafka_perf_acks_all": "kafka"}
# What each measures, where it is a variant of the target (reference_for "kafka/default"), not the target.
MEASURES = {"kafka_perf": "kafka/default", "kafka_perf_acks_all": "kafka/acks_all",
            "nats_bench_js_sync": "jetstream/sync_publish"}


def params(**overrides) -> tools.Params:
    return tools.read_params(tools.Params, DEFAULTS | overrides)


def holds(rule: str, env: dict) -> bool:
    """A spec verify rule (Python syntax: ==, +, *, or) on the numbers of a result."""
    return bool(eval(rule, {"__builtins__": {}}, env))  # the rules are our own spec's, not input


MEASURED = ("publish_ns", "source_cpu_ns", "receiver_cpu_ns", "peak_rss_bytes", "receiver_received",
            "receiver_first_ns", "receiver_last_ns")


def rules_hold(answer: dict, p: tools.Params) -> None:
    """The spec's verify rules hold (the tools' variants are not lossless), and measured has the
    contract's raw facts: integers, and one list entry per receiver."""
    env = {k: v for k, v in vars(p).items()} | answer["verify"] | {"lossless": 0}
    for rule in SPEC["verify"]:
        assert holds(rule["rule"], env), (rule["rule"], answer["verify"])
    assert "metrics" not in answer
    measured = answer["measured"]
    for name in MEASURED:
        values = measured[name] if isinstance(measured[name], list) else [measured[name]]
        assert all(isinstance(v, int) and v >= 0 for v in values), (name, measured)
    assert len({len(measured[name]) for name in MEASURED[4:]}) == 1, measured


def msgs_per_s(measured: dict) -> float:
    """The spec's msgs_per_s: the mean of each receiver's rate, first to last message."""
    rates = [n / ((last - first) / 1e9) if n >= 2 and last > first else 0
             for n, first, last in zip(measured["receiver_received"], measured["receiver_first_ns"],
                                       measured["receiver_last_ns"], strict=True)]
    return sum(rates) / len(rates)


# ---------------------------------------------------------------- parameters


def test_params_are_the_spec_s():
    assert set(SPEC["params"]) == {field.name for field in dataclasses.fields(tools.Params)}


def test_variants_are_declared_with_their_tool_and_broker():
    for variant, service in BROKER.items():
        body = TOML["variants"][variant]
        assert body["workloads"] == ["pubsub"] and body["label"] == "reference"
        assert body["services"] == [service] and body["reference_for"] == [MEASURES.get(variant, service)]
        assert body["options"] == {"tool": variant}
    assert set(BROKER) == set(tools.TOOLS)


def test_a_missing_param_is_internal():
    with pytest.raises(tools.ToolError) as caught:
        tools.read_params(tools.Params, {k: v for k, v in DEFAULTS.items() if k != "receivers"})
    assert caught.value.kind == "internal" and "params.receivers is absent" in caught.value.message


@pytest.mark.parametrize("options, named", [({}, "option tool"), ({"tool": "iperf3"}, "option tool"),
                                            ({"tool": "perftest", "jvm": "x"}, "unknown option jvm")])
def test_options_name_a_known_tool_and_nothing_else(options, named):
    request = {"workload": "pubsub", "options": options, "params": DEFAULTS}
    with pytest.raises(tools.ToolError) as caught:
        tools.handle(request)
    assert caught.value.kind == "internal" and named in caught.value.message


@pytest.mark.parametrize("variant, overrides, named", [
    ("nats_bench", {"rate": 1000, "batching_bytes": 8192}, "rate"),
    ("nats_bench", {"batching_bytes": 8192, "sources": 2, "source_threads": 1}, "source_threads"),
    ("redis_benchmark", {"rate": 1000}, "rate"),
    ("redis_benchmark", {"payload_bytes": 131072}, "payload_bytes"),
    ("perftest", {"rate": 1000}, "rate"),
    ("perftest", {"batching_bytes": 8192}, "batching_bytes"),
    ("perftest", {"sources": 2, "source_threads": 1}, "source_threads"),
    ("kafka_perf", {"rate": 1000}, "rate"),
    ("kafka_perf_acks_all", {"sources": 2, "source_threads": 1}, "source_threads"),
])
def test_what_a_tool_cannot_do_is_unsupported(variant, overrides, named):
    with pytest.raises(tools.ToolError) as caught:
        tools.check_supported(variant, params(**overrides))
    assert caught.value.kind == "unsupported" and named in caught.value.message


def test_redis_pipeline_follows_batching_bytes():
    assert tools.redis_pipeline(params(batching_bytes=0, payload_bytes=1024)) == 1
    assert tools.redis_pipeline(params(batching_bytes=8192, payload_bytes=1024)) == 8
    assert tools.redis_pipeline(params(batching_bytes=8192, payload_bytes=65536)) == 1


def test_argv_maps_the_parameters(monkeypatch):
    monkeypatch.setenv("MSGBENCH_SERVICE_URL", "redis://127.0.0.1:6390")
    monkeypatch.setenv("MSGBENCH_SERVICE_ADDR", "127.0.0.1:6390")
    p = params(sources=4, source_threads=2, payload_bytes=100, batching_bytes=1000)
    argv = tools.redis_argv(p, 5000)
    assert argv[:12] == ["redis-benchmark", "-h", "127.0.0.1", "-p", "6390", "-c", "4", "-P", "10", "-n", "5000",
                         "--threads"]
    assert argv[-3:-1] == ["PUBLISH", "msgbench.0"] and len(argv[-1]) == 100
    nats = tools.nats_argv("nats://h:1", params(sources=3, receivers=2), 999, Path("x.csv"), "sub")
    assert nats[nats.index("--sub") + 1] == "2" and nats[nats.index("--pub") + 1] == "0"
    assert nats[nats.index("--msgs") + 1] == "999" and nats[nats.index("--size") + 1] == "1024"
    java = tools.perftest_argv("amqp://h:1", params(sources=2, source_threads=2, receivers=3), 10, 7)
    for flag, value in (("-x", "2"), ("-y", "3"), ("-s", "1024"), ("-C", "10"), ("-D", "20"), ("-z", "7")):
        assert java[java.index(flag) + 1] == value, flag
    assert "-a" in java


def test_kafka_perf_argv_maps_the_parameters():
    """payload -> --record-size, acks -> acks=, batching 0 -> the Java client's own batch.size and linger.ms,
    batching N -> batch.size=N with the kafka target's 10 ms linger; consumers from the end, a group each."""
    p = params(payload_bytes=100, batching_bytes=0)
    producer = tools.kafka_producer_argv("h:9", "t", p, 5000, 1000, "all")
    assert producer[producer.index(tools.KAFKA_PRODUCER_MAIN) + 1:producer.index("--command-property")] == [
        "--bootstrap-server", "h:9", "--topic", "t", "--num-records", "6000", "--warmup-records", "1000",
        "--reporting-interval", str(tools.KAFKA_REPORT_MS), "--record-size", "100", "--throughput", "-1"]
    # the calibration: no warm-up records, timed by its own windows
    calibrating = tools.kafka_producer_argv("h:9", "t", p, tools.KAFKA_CALIBRATION_CAP, 0, "1")
    assert "--warmup-records" not in calibrating and "--reporting-interval" in calibrating
    props = producer[producer.index("--command-property") + 1:]
    assert "acks=all" in props and "compression.type=none" in props
    assert not [x for x in props if x.startswith(("batch.size", "linger.ms"))]
    batched = tools.kafka_producer_props(params(batching_bytes=8192), "1")
    assert "acks=1" in batched and "batch.size=8192" in batched and "linger.ms=10" in batched
    consumer = tools.kafka_consumer_argv("h:9", "t", "g1", 7000, 30000, Path("l.properties"))
    for flag, value in (("--group", "g1"), ("--num-records", "7000"), ("--timeout", "30000"),
                        ("--reporting-interval", "1"), ("--date-format", tools.KAFKA_DATE_FORMAT)):
        assert consumer[consumer.index(flag) + 1] == value, flag
    assert "--from-latest" in consumer and "--show-detailed-stats" in consumer
    assert "-Dlog4j2.configurationFile=l.properties" in consumer
    topic = tools.kafka_topic_argv("h:9", "t", params(sources=3))
    assert topic[topic.index("--partitions") + 1] == "3" and topic[topic.index("--replication-factor") + 1] == "1"
    # bounded as the kafka target's topic: warm-up and calibration records do not fill the disk
    assert [topic[i + 1] for i, arg in enumerate(topic) if arg == "--config"] == [
        f"retention.bytes={1 << 30}", f"segment.bytes={128 << 20}"]
    deleting = tools.kafka_topic_delete_argv("h:9", "t")
    assert deleting[deleting.index(tools.KAFKA_TOPICS_MAIN) + 1:] == [
        "--bootstrap-server", "h:9", "--delete", "--topic", "t"]


# ---------------------------------------------------------------- parsers on real outputs


def test_nats_bench_csv_and_pub_rate():
    pubs = tools.parse_nats_csv((DATA / "nats_bench_pub.csv").read_text())
    subs = tools.parse_nats_csv((DATA / "nats_bench_sub.csv").read_text())
    assert [c.client for c in pubs] == ["P0", "P1"] and [c.msgs for c in pubs] == [100000, 100000]
    assert [c.client for c in subs] == ["S0", "S1"] and [c.msgs for c in subs] == [200000, 200000]
    assert subs[0].msgs_per_s == 470320 and subs[1].seconds == pytest.approx(0.453560)
    assert tools.parse_nats_pub_rate((DATA / "nats_bench_pub.stdout").read_text()) == 704493
    assert (DATA / "nats_bench_sub.stderr").read_text().count(tools.NATS_SUBSCRIBER) == 2


def test_nats_bench_js_counts_each_clients_job_not_its_connection():
    # natscli v0.1.5 --js, 2 publishers and 2 subscribers, --msgs 5000 --size 64: the
    # publishers' connections counted their acks too, the subscribers' flow control.
    text = ("#RunID,ClientID,MsgCount,MsgBytes,MsgsPerSec,BytesPerSec,DurationSecs\n"
            "x,S0,5004,320000,2439,156113.1,2.049795\nx,P0,5000,160000,4539,290513.4,0.550749\n")
    assert [c.msgs for c in tools.parse_nats_csv(text)] == [5004, 5000]
    assert [c.msgs for c in tools.parse_nats_csv(text, 64)] == [5000, 2500]


def test_nats_bench_js_sync_publishes_synchronously_and_subscribes_as_js():
    """--syncpub on the publishers only; both halves on nats_bench_js's stream and store."""
    p = params(sources=2, receivers=3)
    pub = tools.nats_argv("nats://h:4222", p, 5000, Path("pub.csv"), "pub", js=True, sync=True)
    sub = tools.nats_argv("nats://h:4222", p, 5000, Path("sub.csv"), "sub", js=True, sync=True)
    assert "--syncpub" in pub and "--syncpub" not in sub and "--purge" in sub
    for argv in (pub, sub):
        assert argv[argv.index("--js"):argv.index("--js") + 5] == tools.NATS_JS_ARGS
    assert "--syncpub" not in tools.nats_argv("nats://h:4222", p, 5000, Path("pub.csv"), "pub", js=True)
    assert TOML["variants"]["nats_bench_js_sync"]["reference_for"] == ["jetstream/sync_publish"]


def test_nats_bench_garbage_is_an_internal_error():
    with pytest.raises(tools.ToolError, match="Pub stats"):
        tools.parse_nats_pub_rate((DATA / "nats_bench_sub.stdout").read_text())
    with pytest.raises(tools.ToolError, match="CSV"):
        tools.parse_nats_csv("#RunID,ClientID\nrun,S0,many\n")


def test_redis_benchmark_summary():
    completed, seconds, rps = tools.parse_redis_benchmark((DATA / "redis_benchmark.stdout").read_text())
    assert (completed, seconds, rps) == (50000, 2.01, 24912.80)
    assert tools.parse_redis_benchmark("  5 requests completed in 0.00 seconds\n"
                                       "  throughput summary: inf requests per second\n")[2] == float("inf")
    with pytest.raises(tools.ToolError, match="summary"):
        tools.parse_redis_benchmark("PUBLISH msgbench.0 x: rps=0.0 (overall: 3000.0)\r")


def test_a_reference_subscriber_that_saw_a_foreign_push_fails_the_run():
    good = 'subscribed\n{"received": 5, "mismatched": 0, "first_ns": 1, "last_ns": 9}\n'
    assert tools.parse_redis_subscriber(good)["received"] == 5
    with pytest.raises(tools.ToolError, match="2 pushes that were not a message"):
        tools.parse_redis_subscriber(good.replace('"mismatched": 0', '"mismatched": 2'))
    with pytest.raises(tools.ToolError, match="printed no counts"):
        tools.parse_redis_subscriber("subscribed\n")


def test_perftest_summary_with_counts():
    summary = tools.parse_perftest((DATA / "perftest_counts.stdout").read_text())
    assert (summary.sending, summary.receiving) == (17937, 35874)
    assert (summary.producers_done, summary.consumers_done) == (2, 2)


def test_perftest_summary_of_one_producer_and_one_consumer():
    """PerfTest 2.22.1 writes the count in brackets only when it is above one (seen in a harness run)."""
    text = ("test stopped (Producer reached message limit, Consumer reached message limit)\n"
            "id: test-075001-123, sending rate avg: 5771 msg/s\nid: test-075001-123, receiving rate avg: 5770 msg/s\n")
    summary = tools.parse_perftest(text)
    assert (summary.producers_done, summary.consumers_done) == (1, 1)


def test_perftest_steady_rates_leave_out_the_jvm_s_first_second():
    """Three seconds sampled: the steady rates are the mean of the second and third; one second (or none)
    sampled: the averages over the whole test."""
    text = (DATA / "perftest_counts.stdout").read_text()
    first = "time 1.000 s, sent: 20000 msg/s, received: 34680 msg/s"
    assert first in text
    later = ("id: t, time 2.000 s, sent: 30000 msg/s, received: 50000 msg/s, min/median/75th/95th/99th "
             "consumer latency: 1/2/3/4/5 µs\n"
             "id: t, time 3.000 s, sent: 40000 msg/s, received: 70000 msg/s, min/median/75th/95th/99th "
             "consumer latency: 1/2/3/4/5 µs\n")
    three = tools.parse_perftest(text.replace("test stopped", later + "test stopped"))
    assert three.samples == ((20000, 34680), (30000, 50000), (40000, 70000))
    assert three.steady == (35000, 60000)
    one = tools.parse_perftest(text)
    assert one.steady == (one.sending, one.receiving) == (17937, 35874)


def test_perftest_summary_at_its_time_limit_counts_nobody_done():
    summary = tools.parse_perftest((DATA / "perftest_time.stdout").read_text())
    assert summary.stopped == "Reached time limit" and (summary.producers_done, summary.consumers_done) == (0, 0)
    assert (summary.sending, summary.receiving) == (22768, 20146)


# ---------------------------------------------------------------- sizing and results


def test_sized_run_keeps_a_run_of_about_duration():
    p = params(duration_s=2)
    true_rate = {2000: 10_000.0}  # the short first run is slow (set-up); the real rate is 50,000/s
    calls = []

    def run(n):
        calls.append(n)
        return true_rate.get(n, 50_000.0), n

    assert tools.sized_run(run, 2000, p) == 100_000  # 20,000 at 50,000/s: 0.4 s, under half of 2 s
    assert calls == [2000, 20_000, 100_000]


def test_sized_run_stops_after_its_rounds():
    p = params(duration_s=1)
    calls = []

    def run(n):
        calls.append(n)
        return n * 1000.0, n  # always a millisecond: never long enough

    tools.sized_run(run, 10, p)
    assert len(calls) == tools.SIZING_ROUNDS


def test_result_holds_the_spec_rules():
    p = params(receivers=2)
    answer = tools.result(publish_ns=10**9, published=100, receivers=2, receiver_received=[100, 90],
                          receiver_last_ns=[10**9, 2 * 10**9], source_cpu_ns=1, receiver_cpu_ns=2, peak_rss=1,
                          extra={"broker_cpu_ns": 3}, verify_extra={})
    rules_hold(answer, p)
    assert answer["verify"]["order_checked"] is False and answer["verify"]["content_checked"] is False
    assert answer["verify"]["received"] == 190 and answer["verify"]["lost"] == 10
    assert "lossless" not in answer["verify"] and answer["verify"]["dropped"] == 0
    assert answer["measured"]["receiver_first_ns"] == [0, 0] and answer["measured"]["broker_cpu_ns"] == 3
    assert msgs_per_s(answer["measured"]) == (100 + 45) / 2


def test_nats_result_keeps_the_tool_s_own_rates():
    """The subscribers' CSV rates and the Pub stats rate follow from the raw facts as before."""
    subs = tools.parse_nats_csv((DATA / "nats_bench_sub.csv").read_text())
    pubs = tools.parse_nats_csv((DATA / "nats_bench_pub.csv").read_text())
    run = tools.NatsRun(pubs=pubs, subs=subs, pub_rate=704493.0, pub_cpu_ns=5, sub_cpu_ns=6, peak_rss=7)
    p = params(sources=2, source_threads=2, receivers=2)
    answer = tools.nats_result(p, run, 8)
    rules_hold(answer, p)
    measured = answer["measured"]
    assert msgs_per_s(measured) == pytest.approx(sum(c.msgs_per_s for c in subs) / 2, rel=1e-4)
    assert answer["verify"]["published"] / (measured["publish_ns"] / 1e9) == pytest.approx(704493.0)
    assert measured["broker_cpu_ns"] == 8 and measured["source_cpu_ns"] == 5


def test_perftest_result_keeps_the_tool_s_own_rates():
    """Its rates over the whole test follow from the raw facts as before: receiving / receivers, sending."""
    summary = tools.parse_perftest((DATA / "perftest_counts.stdout").read_text())
    threads = {tools.PRODUCER_THREAD: 10**6, tools.CONSUMER_THREAD: 2 * 10**6}
    tool = SimpleNamespace(threads_ns=threads.get, cpu_ns=5 * 10**6, peak_rss=9)
    p = params(sources=2, source_threads=2, receivers=2)
    answer = tools.perftest_result(p, summary, tool, 17937 * 3, None)
    rules_hold(answer, p)
    measured = answer["measured"]
    assert msgs_per_s(measured) == pytest.approx(summary.receiving / 2)
    assert answer["verify"]["published"] / (measured["publish_ns"] / 1e9) == pytest.approx(summary.sending)
    assert measured["tool_other_cpu_ns"] == 2 * 10**6 and "broker_cpu_ns" not in measured


def test_kafka_producer_summary():
    """Its summaries (with the percentiles), not its progress lines: every acknowledged record, warm-up
    included, and the steady state's records/sec (without the warm-up records: 8,741/s against 4,158/s
    over the whole run, its JVM's start and first metadata fetch)."""
    produced = tools.parse_kafka_producer((DATA / "kafka_producer.stdout").read_text())
    assert produced == tools.KafkaProduced(12000, 8741.258741)
    whole_run_only = ("20000 records sent, 1701.982810 records/sec (0.16 MB/sec), 1144.95 ms avg latency, 7483.00 "
                      "ms max latency, 1159 ms 50th, 1523 ms 95th, 1738 ms 99th, 1785 ms 99.9th.\n")
    for text in (whole_run_only, "1 records sent, 0.1 records/sec (0.00 MB/sec), 1195.0 ms avg latency, "
                                 "1195.0 ms max latency.\n"):
        with pytest.raises(tools.ToolError) as caught:
            tools.parse_kafka_producer(text)
        assert caught.value.kind == "internal" and "no summary" in caught.value.message


def test_kafka_producer_windows():
    """Kafka 4.4.0's producer with --warmup-records 300000 of 500,000 and 1 s windows, on a loaded
    machine: the warm-up's windows, then, from "In steady state.", the steady-state records' alone.
    The rate is over those less the first, which spanned the 10 s in which the client's buffer still
    sent warm-up records (1 record in it); its steady-state summary (7,696/s) spans that first window."""
    text = (DATA / "kafka_producer_windows.stdout").read_text()
    windows = tools.parse_kafka_windows(text)
    assert len(windows) == 22 and windows[0] == tools.KafkaWindow(1, 0.3)
    steady = tools.steady_windows(text)
    assert [w.records for w in steady] == [38897, 15688, 11838, 7695, 9472, 39211, 27672]
    produced = tools.parse_kafka_producer(text)
    assert produced.records == 500000
    assert produced.rate == pytest.approx(sum(w.records for w in steady) / sum(w.records / w.rate for w in steady))
    assert produced.rate > 2 * 7696.451936
    # no window past the first steady one (a very short run): the steady-state summary's rate
    assert tools.parse_kafka_producer((DATA / "kafka_producer.stdout").read_text()).rate == 8741.258741
    assert tools.windows_rate(windows[:3], after_s=1e9) is None
    # one long window across the warm-up's end (a stalled machine) does not count as past it
    assert tools.windows_rate([tools.KafkaWindow(100, 100.0)] * 7 + [tools.KafkaWindow(5, 1.0)], 8, 2) is None
    assert tools.windows_rate([tools.KafkaWindow(100, 100.0)] * 8 + [tools.KafkaWindow(5, 1.0)] * 2, 8, 2) == 1.0


def test_kafka_warm_up_scales_with_duration_up_to_8_s():
    """A measurement (duration_s 4 and up) warms for 8 s and calibrates warm for 2; from 2 s, 2 x and
    0.5 x duration_s; a quick check (the conformance suite's 0.3 s) has no room for warm JVMs in the
    spec's time limit: 1 s of warm-up and a cold calibration."""
    durations = (0.1, 0.3, 1, 1.9, 2, 3, 4, 5, 60)
    assert [tools.kafka_warm(params(duration_s=d)) for d in durations] == [False] * 4 + [True] * 5
    assert [tools.kafka_warmup_s(params(duration_s=d)) for d in durations] == [1, 1, 1, 1, 4, 6, 8, 8, 8]
    assert [tools.kafka_calibration_s(params(duration_s=d)) for d in (2, 3, 4, 5)] == [1, 1.5, 2, 2]


def test_kafka_calibration_is_the_rate_of_warm_windows(monkeypatch):
    """Each producer runs until its windows past the warm-up (8 s at duration_s 5) cover 2 s more,
    then is stopped: their rate, added up over the producers; the cold first seconds (a JVM's JIT)
    are not in it."""
    line = "{n} records sent, {r:.1f} records/sec (0.10 MB/sec), 3.0 ms avg latency, 9.0 ms max latency."
    started = []

    def fake_producer(bootstrap, topic, p, records, warmup, acks):
        assert records == tools.KAFKA_CALIBRATION_CAP and warmup == 0
        cold = 1000.0 * (len(started) + 1)  # 1 s windows: producer 0 warms to 10,000/s, producer 1 to 20,000/s
        rates = [cold] * tools.KAFKA_WARMUP_S + [10 * cold] * tools.KAFKA_CALIBRATION_S
        text = "\n".join(line.format(n=int(r), r=r) for r in rates)
        started.append(text)
        return [sys.executable, "-c", f"import time; print({text!r}, flush=True); time.sleep(60)"]

    monkeypatch.setattr(tools, "kafka_producer_argv", fake_producer)
    monkeypatch.setattr(tools, "STARTED", time.monotonic())
    before = time.monotonic()
    rate = tools.kafka_calibrate("h:9", "t", params(sources=2, source_threads=2, duration_s=5), "1")
    assert rate == pytest.approx(10_000 + 20_000) and len(started) == 2
    assert time.monotonic() - before < 30, "stopped once warm, not left to run"


def test_kafka_consumer_lines():
    """Count and rate from its progress lines: first line at its first record (count 1) to its last line."""
    text = (DATA / "kafka_consumer.stdout").read_text()
    consumed = tools.parse_kafka_consumer(text, 3000)
    lines = tools.KAFKA_CONSUMER_LINE.findall(text)
    assert lines[0][1] == "1" and consumed.received == 3000
    first, last = (tools.time.mktime(tools.time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")) + int(stamp[20:]) / 1000
                   for stamp in (lines[0][0], lines[-1][0]))
    assert consumed.rate == pytest.approx((int(lines[-1][1]) - 1) / (last - first))
    # The producers' warm-up records left out: the rate is from the first line past them.
    warm = tools.parse_kafka_consumer(text, 3000, warmup=1000)
    past = next((stamp, int(count)) for stamp, count in lines if int(count) > 1000)
    start = tools.time.mktime(tools.time.strptime(past[0][:19], "%Y-%m-%d %H:%M:%S")) + int(past[0][20:]) / 1000
    assert warm.received == 3000 and warm.rate == pytest.approx((int(lines[-1][1]) - past[1]) / (last - start))
    # Timed out: what it printed last is what it is known to have read.
    short = tools.parse_kafka_consumer(text + "WARNING: Exiting before consuming the expected number of records: "
                                       "timeout (30000 ms) exceeded.\n", 3000)
    assert short.received == int(lines[-1][1]) < 3000
    with pytest.raises(tools.ToolError) as caught:
        tools.parse_kafka_consumer("WARNING: Exiting before consuming the expected number of records\n", 3000)
    assert caught.value.kind == "internal"
    with pytest.raises(tools.ToolError) as caught:  # one line: nothing to time it by, not a rate of 0
        tools.parse_kafka_consumer(text.splitlines()[0] + "\n", 3000)
    assert caught.value.kind == "resource" and "no two progress lines" in caught.value.message


def test_kafka_result_keeps_the_tools_own_rates():
    run = tools.KafkaRun(produced=[tools.KafkaProduced(500, 1000.0), tools.KafkaProduced(500, 3000.0)],
                         consumed=[tools.KafkaConsumed(1000, 2000.0), tools.KafkaConsumed(990, 500.0)],
                         source_cpu_ns=5, receiver_cpu_ns=6, peak_rss=7)
    p = params(sources=2, source_threads=2, receivers=2)
    answer = tools.kafka_result(p, run, 8)
    rules_hold(answer, p)
    measured, verify = answer["measured"], answer["verify"]
    assert verify["published"] == 1000 and verify["received"] == 1990 and verify["lost"] == 10
    assert verify["published"] / (measured["publish_ns"] / 1e9) == pytest.approx(4000.0)
    assert msgs_per_s(measured) == pytest.approx((2000.0 + 500.0) / 2)
    assert measured["broker_cpu_ns"] == 8 and measured["receiver_cpu_ns"] == 6


# ---------------------------------------------------------------- through the worker, with real brokers


def services_module():
    sys.path.insert(0, str(FOLDER.parent.parent))
    try:
        from msgbench.running import services
    except ImportError:
        return None
    return services


def call(variant: str, overrides: dict, env: dict) -> dict:
    request = {"workload": "pubsub", "variant": variant, "options": TOML["variants"][variant]["options"],
               "params": DEFAULTS | SMALL | overrides, "repetition": 1}
    proc = subprocess.run(TOML["run"], cwd=FOLDER, input=json.dumps(request) + "\n", capture_output=True,
                          text=True, env=os.environ | env, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert lines[0]["type"] == "hello" and lines[0]["variant"] == variant and lines[0]["runtime_version"]
    assert len(lines) == 2, proc.stdout + proc.stderr[-2000:]
    return lines[1]


READY = {
    "nats_bench": lambda: tools.NATS.exists() and shutil.which("nats-server"),
    "nats_bench_js": lambda: tools.NATS.exists() and shutil.which("nats-server"),
    "nats_bench_js_sync": lambda: tools.NATS.exists() and shutil.which("nats-server"),
    "redis_benchmark": lambda: shutil.which("redis-benchmark") and shutil.which("redis-server"),
    "redis_benchmark_sub": lambda: shutil.which("redis-benchmark") and shutil.which("redis-server"),
    "perftest": lambda: list(tools.LIB.glob("perf-test-*.jar")) and shutil.which("java")
    and Path("/usr/lib/rabbitmq/bin/rabbitmq-server").exists(),
    # the tools' jars and the broker both come from targets/kafka's make build
    "kafka_perf": lambda: list(tools.KAFKA_LIB.glob("kafka-tools-*.jar")) and shutil.which("java")
    and (FOLDER.parent / "kafka" / "bin" / "kafka-broker").exists(),
}
READY["kafka_perf_acks_all"] = READY["kafka_perf"]
# nats_bench at batching_bytes = 0: nats.go's ordinary Publish, as msgbench's nats default at 0 (issue 13).
RUNS = {"nats_bench": {"batching_bytes": 0, "sources": 2, "source_threads": 2, "receivers": 2},
        "nats_bench_js": {"batching_bytes": 0, "sources": 2, "source_threads": 2, "receivers": 2},
        "nats_bench_js_sync": {"sources": 2, "source_threads": 2, "receivers": 2},
        "redis_benchmark": {"sources": 2, "source_threads": 2, "receivers": 2},
        "redis_benchmark_sub": {"sources": 2, "source_threads": 2, "receivers": 2, "batching_bytes": 1024},
        "perftest": {"sources": 2, "source_threads": 2, "receivers": 2},
        # drain_ms raises the spec's time limit (60 s + 2 x drain): a JVM start per process and run,
        # and 8 s of warm-up in the calibration and in the run, on a loaded machine
        "kafka_perf": {"sources": 2, "source_threads": 2, "receivers": 2, "drain_ms": 20000},
        "kafka_perf_acks_all": {"sources": 1, "source_threads": 1, "receivers": 1, "batching_bytes": 8192,
                                "drain_ms": 20000}}


@pytest.fixture(scope="module")
def brokers():
    """The brokers, each started once for this module: the two Kafka tools share one
    Kafka (a JVM whose start is ~10 CPU-seconds), the three NATS tools their servers."""
    services = services_module()
    if services is None:
        yield None
        return
    with services.Services(keep_log=lambda name, text: None, note=lambda note: None) as running:
        yield running


@pytest.mark.parametrize("variant", tools.TOOLS)
def test_a_small_run_through_the_worker(variant, brokers):
    if brokers is None or not READY[variant]():
        pytest.skip(f"{variant}: the tool (make build) or its broker is not installed")
    env = brokers.env_for((BROKER[variant],))
    p = params(**SMALL | RUNS[variant])
    answer = call(variant, RUNS[variant], env)
    assert answer["type"] == "result", answer
    rules_hold(answer, p)
    verify, measured = answer["verify"], answer["measured"]
    assert verify["published"] > 0 and msgs_per_s(measured) > 0 and measured["publish_ns"] > 0
    if variant == "redis_benchmark":
        assert verify["receivers"] == 0 and verify["received"] == 0
    else:  # every message counted at both receivers: for redis_benchmark_sub, the frame length is right
        assert verify["received"] == verify["published"] * p.receivers and verify["lost"] == 0
        assert measured["receiver_cpu_ns"] > 0
    if variant == "redis_benchmark_sub":
        assert verify["subscribers"] == 2 and verify["mismatched"] == 0
    assert measured["source_cpu_ns"] > 0 and measured["peak_rss_bytes"] > 0
    unsupported = call(variant, {"rate": 1000, "batching_bytes": 8192}, env)
    assert unsupported["type"] == "error" and unsupported["kind"] == "unsupported", unsupported


def test_without_the_broker_it_is_a_resource_error():
    env = {"MSGBENCH_SERVICE_URL": ""}
    answer = call("redis_benchmark", {}, env)
    assert answer["type"] == "error" and answer["kind"] == "resource" and "MSGBENCH_SERVICE_URL" in answer["message"]


def test_a_socket_tool_does_not_run_pubsub():
    answer = call("iperf3", {}, {})
    assert answer["kind"] == "internal" and "nats_bench" in answer["message"]


def test_a_run_carries_the_broker_cpu_of_that_run_only(monkeypatch):
    def busy(n):
        end = time.process_time() + 0.05
        while time.process_time() < end:
            pass
        return 1000.0, n

    monkeypatch.delenv("MSGBENCH_SERVICE_SESSIONS", raising=False)
    assert tools.with_broker_cpu(busy)(7) == (1000.0, (7, None))
    assert tools.broker_extra(None) == {}
    monkeypatch.setenv("MSGBENCH_SERVICE_SESSIONS", str(os.getsid(0)))  # this test's session: it burns CPU
    rate, (outcome, broker_ns) = tools.with_broker_cpu(busy)(7)
    assert (rate, outcome) == (1000.0, 7) and broker_ns >= 30_000_000
    assert tools.broker_extra(broker_ns) == {"broker_cpu_ns": broker_ns}


def test_a_killed_workers_kafka_folder_is_removed_by_the_next_one(tmp_path, monkeypatch):
    """The Kafka tools' folder of a worker killed at its time limit (SIGKILL) is removed by
    the next worker; a running worker's folder is kept."""
    monkeypatch.setattr(tools.tempfile, "gettempdir", lambda: str(tmp_path))
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process has now
    stale = tmp_path / f"{tools.KAFKA_TEMP_PREFIX}{gone.pid}-abc"
    alive = tmp_path / f"{tools.KAFKA_TEMP_PREFIX}{os.getppid()}-def"
    other = tmp_path / "msgbench-kafka-perf-notapid"
    for folder in (stale, alive, other):
        folder.mkdir()
        (folder / "log4j2.properties").write_text("x")
    assert tools.sweep_stale_kafka_dirs() == [str(stale)]
    assert not stale.exists() and alive.exists() and other.exists()
