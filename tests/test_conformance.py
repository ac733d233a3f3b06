"""Every real target, driven through the real protocol with small parameters.

For each target, variant and workload it declares: the hello is right, the result
matches the schema, its raw facts fit the spec and every metric derives from them,
the verify counts hold; the worker refuses options it does not know and unknown
workloads; and no
process is left behind. A target whose runtime is missing is skipped, except in CI
(MSGBENCH_REQUIRE_ALL_TARGETS=1), where that is a failure.
"""

import math
import re

import pytest

from msgbench.core import spec
from msgbench.hosts import placement
from msgbench.running import runner, services
from msgbench.workers import targets
from msgbench.workers.groups import group_alive
from msgbench.workers.worker import run_worker
from tests.conftest import ready_target

pytestmark = pytest.mark.targets

SMALL = {
    "ring": {"n": 100, "m": 5},
    "fanin": {"senders": 2, "duration_ms": 100},
    # T of 1 s: stress on cooperative schedulers (java's virtual threads, no preemption) delivers
    # a message only after every client's round of sends; p99 220 ms on a loaded machine, cold JIT
    # (docs/chat-server-soak.md), which a T of 0.2 s sometimes missed entirely.
    "chat": {"groups": 2, "clients_per_group": 3, "duration_s": 1.0, "drain_timeout_s": 5},
    "socket": {"size": 1024, "total_bytes": 65536, "sockets": 2},
    "pubsub": {"payload_bytes": 64, "duration_s": 0.3, "sources": 2, "source_threads": 2,
               "receivers": 2, "drain_ms": 2000},  # a loaded CI machine can stall a broker ~1 s
}
EXIT_SIGNAL_MIX = [{"percent": 50, "kind": "exit_signal", "size": 10},
                   {"percent": 50, "kind": "message", "size": 10}]
TIME_LIMIT_S = 60


def real_targets():
    targets.registry.cache_clear()
    return list(targets.registry().values())


def on_its_broker(t: targets.Target, variant: str | None = None) -> list:
    """make test runs these cases side by side (pytest -n, docs/decisions.md): the cases of
    one broker go to one worker, one after another, so that its broker starts once (the
    module's fixture holds it) rather than once per worker, and no two brokers' JVMs (Kafka,
    RabbitMQ) start at once on the two cores and time each other out."""
    needed = t.services_for(t.variants[variant or t.default_variant])
    if t.kind == "reference" and needed == ("kafka",):
        # Kafka's own perf tools: a cold JVM producer and consumer that must each take their
        # place within the point's time limit, which three other workers' load made them miss.
        return [pytest.mark.alone]
    return [pytest.mark.xdist_group(f"broker-{needed[0]}")] if needed else []


def by_target(names: list[str]) -> list:
    return [pytest.param(name, marks=on_its_broker(targets.target(name))) for name in names]


def by_variant(pairs: list[tuple[str, str]]) -> list:
    return [pytest.param(name, variant, marks=on_its_broker(targets.target(name), variant)) for name, variant in pairs]


def cases():
    return [pytest.param(t.name, variant.name, workload, id=f"{t.name}-{variant.name}-{workload}",
                         marks=on_its_broker(t, variant.name))
            for t in real_targets() for variant in t.variants.values() for workload in variant.workloads]


@pytest.fixture(scope="module")
def brokers():
    """The brokers the messaging targets need, each started once for this module."""
    with services.Services(keep_log=lambda name, text: None, note=lambda note: None) as running:
        yield running


def call(t: targets.Target, variant: str, workload: str, params: dict, brokers: services.Services):
    v = t.variants[variant]
    peer_env = placement.Peers([]).env_for(t, v, params, 10_000, workload)  # the server half, on loopback
    service_env = brokers.env_for(t.services_for(v))
    outcome = run_worker(
        t.argv(v, 10_000), cwd=t.folder, env=t.worker_env(v) | peer_env | service_env,
        request=t.request(workload, v, params, 1, False),
        target=t.name, time_limit_s=TIME_LIMIT_S,
    )
    assert outcome.pgid and not group_alive(outcome.pgid), "a worker process outlived its measurement"
    if outcome.status == "ok":  # the metrics, from the raw facts, as a run derives them
        # The thin contract's invariants: raw facts only from the worker, every one the
        # spec declares and nothing else; every metric is the harness's.
        assert not outcome.metrics, f"the worker computed metrics itself: {sorted(outcome.metrics)}"
        wl = spec.workload(workload)
        assert spec.measured_problems(wl, outcome.measured, outcome.histograms, params) == []
        runner.derive(wl, params, v, outcome)
    return outcome


def full_params(workload: str, overrides: dict) -> dict:
    return spec.workload(workload).defaults() | SMALL[workload] | overrides


# Every mode of a workload is driven. A reference tool measures one mode (iperf3 flow,
# sockperf echo), maybe on one socket only: it answers the others `unsupported` and must
# succeed in one.
MODES = {"socket": [{"mode": "echo"}, {"mode": "flow"}, {"mode": "echo", "rate": 20000}],  # closed, open loop
         "pubsub": [{}, {"rate": 2000}]}  # as fast as possible; open loop with latency
# pubsub's tools: nats bench always batches (nats.go's buffer), PerfTest never does, and none
# has an open-loop rate with the spec's latency percentiles.
REFERENCE_MODES = {"socket": [{"mode": "echo"}, {"mode": "flow"}, {"mode": "flow", "sockets": 1},
                              {"mode": "echo", "rate": 20000}],
                   "pubsub": [{}, {"batching_bytes": 8192}, {"rate": 2000}]}


@pytest.mark.parametrize("name, variant, workload", cases())
def test_small_run_reports_every_metric_and_verifies(name, variant, workload, brokers):
    t = ready_target(name)
    wl = spec.workload(workload)
    succeeded = 0
    modes = REFERENCE_MODES if t.kind == "reference" else MODES
    for overrides in modes.get(workload, [{}]):
        params = full_params(workload, overrides)
        outcome = call(t, variant, workload, params, brokers)
        if t.kind == "reference" and outcome.status == "unsupported":
            continue
        check_result(wl, params, outcome)
        if workload == "pubsub" and t.kind != "reference":
            declared = t.variants[variant].lossless
            assert outcome.verify["lossless"] == int(declared), "verify.lossless differs from target.toml"
        succeeded += 1
    assert succeeded, f"{name}/{variant} succeeded in no mode of {workload}"


def check_result(wl, params, outcome):
    assert outcome.status == "ok", outcome.error
    assert outcome.hello["runtime_version"].strip()
    assert spec.missing_metrics(wl, outcome.metrics, params) == []
    for metric, value in outcome.metrics.items():
        assert math.isfinite(value) and value >= 0, f"{metric} = {value}"
    assert outcome.metrics[wl.primary_metric] > 0
    assert spec.failed_rules(wl, params, outcome.verify, outcome.histograms) == []


@pytest.mark.parametrize("name", by_target([t.name for t in real_targets()]))
def test_an_option_the_worker_does_not_know_is_an_error_naming_it(name, brokers):
    """Options are data in target.toml; a worker that silently ignored one would measure something else."""
    t = ready_target(name)
    v = t.variants[t.default_variant]
    workload = v.workloads[0]
    params = full_params(workload, {})
    outcome = run_worker(
        t.argv(v, 10_000), cwd=t.folder,
        env=t.worker_env(v) | placement.Peers([]).env_for(t, v, params, 10_000, workload)
        | brokers.env_for(t.services_for(v)),
        request=t.request(workload, v, params, 1, False) | {"options": v.options | {"no_such_option": 1}},
        target=t.name, time_limit_s=TIME_LIMIT_S)
    assert outcome.status == "error" and "no_such_option" in outcome.error, (outcome.status, outcome.error)


def probe(t: targets.Target, variant: targets.Variant, workload: str, options: dict, brokers: services.Services):
    """One small run of workload on variant with these options instead of the variant's."""
    params = full_params(workload, {})
    return run_worker(
        t.argv(variant, 10_000), cwd=t.folder,
        env=t.worker_env(variant) | placement.Peers([]).env_for(t, variant, params, 10_000, workload)
        | brokers.env_for(t.services_for(variant)),
        request=t.request(workload, variant, params, 1, False) | {"options": options},
        target=t.name, time_limit_s=TIME_LIMIT_S)


@pytest.mark.parametrize("name", by_target([t.name for t in real_targets()]))
def test_the_options_a_worker_reads_are_the_options_its_target_toml_declares(name, brokers):
    """Both ways, from the registry alone. Read => declared: each workload's unknown-option error
    lists the options the worker reads for it ("known here: ..."); their union must be what the
    variants of target.toml set, so no option is read that no variant can send. Declared => read:
    each declared option, sent with a value of a kind none of its declared values has (a fraction
    where they are strings or integers, else a string), must be refused naming it; a worker that
    accepted it would not be reading it (an ignored option measures something else than its
    variant says)."""
    t = ready_target(name)
    declared = {option for v in t.variants.values() for option in v.options}
    read = set()
    for workload in sorted({w for v in t.variants.values() for w in v.workloads}):
        v = next(v for v in t.variants.values() if workload in v.workloads)
        outcome = probe(t, v, workload, v.options | {"no_such_option": 1}, brokers)
        assert outcome.status == "error" and "no_such_option" in outcome.error, (workload, outcome.error)
        known = re.search(r"\(known here: ([^)]*)\)", outcome.error)
        assert known, f"{workload}: the unknown-option error lists no known options: {outcome.error}"
        listed = known.group(1).strip()
        if listed != "none":  # how the Node and Elixir kits say a workload reads no option
            read |= {option.strip() for option in listed.split(",") if option.strip()}
    assert read == declared, f"read but declared by no variant: {sorted(read - declared)}; " \
                             f"declared but read by no workload: {sorted(declared - read)}"
    for option in sorted(declared):
        values = [v.options[option] for v in t.variants.values() if option in v.options]
        wrong = "msgbench-probe" if any(isinstance(value, float) for value in values) else 0.5
        v = next(v for v in t.variants.values() if option in v.options)
        outcome = probe(t, v, v.workloads[0], v.options | {option: wrong}, brokers)
        assert outcome.status == "error" and option in outcome.error, \
            f"{v.name}/{v.workloads[0]} accepted option {option} = {wrong!r}: {outcome.error}"


@pytest.mark.parametrize("name", by_target([t.name for t in real_targets()]))
def test_unknown_workload_is_unsupported(name, brokers):
    t = ready_target(name)
    outcome = call(t, t.default_variant, "no_such_workload", {}, brokers)
    assert outcome.status == "unsupported", outcome.error


@pytest.mark.parametrize("name, variant", by_variant([(t.name, v.name) for t in real_targets()
                                                      for v in t.variants_for("fanin")]))
def test_exit_signals_are_received_or_unsupported(name, variant, brokers):
    """Every variant either carries exit signals (each counted, the rules hold) or says it
    does not, naming them; Erlang, whose notion they are, always carries them."""
    t = ready_target(name)
    params = full_params("fanin", {"mix": EXIT_SIGNAL_MIX})
    outcome = call(t, variant, "fanin", params, brokers)
    if t.language == "erlang" or outcome.status != "unsupported":
        assert outcome.status == "ok", outcome.error
        assert outcome.verify["sent_exit_signal"] > 0 and outcome.verify["sent_message"] > 0
        assert spec.failed_rules(spec.workload("fanin"), params, outcome.verify) == []
    else:
        assert "exit" in outcome.error


@pytest.mark.parametrize("name, variant", by_variant([(t.name, v.name) for t in real_targets()
                                                      if t.kind != "reference" for v in t.variants_for("pubsub")]))
def test_implicit_batching_is_delivered_or_refused_as_unsupported(name, variant, brokers):
    t = ready_target(name)
    params = full_params("pubsub", {"batching_bytes": 8192})
    outcome = call(t, variant, "pubsub", params, brokers)
    if outcome.status == "unsupported":
        assert "batch" in outcome.error, outcome.error
    else:
        check_result(spec.workload("pubsub"), params, outcome)


@pytest.mark.parametrize("name, variant", by_variant([(t.name, v.name) for t in real_targets()
                                                      if t.kind != "reference" for v in t.variants_for("pubsub")]))
def test_a_payload_beyond_the_system_is_refused_or_delivered_whole(name, variant, brokers):
    """The spec's largest payload: a system that cannot carry it says so by name."""
    t = ready_target(name)
    params = full_params("pubsub", {"payload_bytes": 1048576, "duration_s": 0.2, "sources": 1,
                                    "source_threads": 1, "receivers": 1})
    outcome = call(t, variant, "pubsub", params, brokers)
    if outcome.status == "unsupported":
        assert "payload_bytes" in outcome.error, outcome.error
    else:
        check_result(spec.workload("pubsub"), params, outcome)
