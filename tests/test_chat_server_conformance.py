"""Every real chat server (each target that declares chat_server, each variant in its
chat_server_variants: derived from the registry, so a new server needs no edit here),
driven by the one load generator through `msgbench run` with a small G x CPG: the
result verifies, the server kind's metrics derive, the time series holds the server's
stats and the load generator's own, and nothing is left running. A target whose
runtime is missing is skipped, except in CI (MSGBENCH_REQUIRE_ALL_TARGETS=1)."""


import pytest

from msgbench.cli import main
from msgbench.data import results
from msgbench.data.store import Store
from msgbench.workers import chat_server, targets
from tests.conftest import processes_matching, ready_target

pytestmark = pytest.mark.targets


def cases():
    targets.registry.cache_clear()
    return [pytest.param(t.name, v.name, id=f"{t.name}-{v.name}")
            for t in targets.registry().values() for v in chat_server.serving_variants(t)]


@pytest.fixture(scope="module")
def load_generator():
    chat_server.build_load_generator()


@pytest.mark.parametrize(("target", "variant"), cases())
@pytest.mark.parametrize("think_ms", [0, 100], ids=["stress", "realistic"])
def test_every_chat_server_serves_the_load_generator(target, variant, think_ms, load_generator, tmp_path,
                                                     monkeypatch):
    ready_target(target)
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("MSGBENCH_STORE", str(store))
    # Stress listens 1 ms after each send (the seed's other setting): an unpaced flood
    # of 0.5 s can take a loaded CI machine longer to drain than any fixed timeout.
    assert main(["run", "chat", "--target", target, "--variant", variant, "-p", "server=ws",
                 "-p", "groups=3", "-p", "clients_per_group=3", "-p", "duration_s=0.5", "-p", f"think_ms={think_ms}",
                 "-p", "listener_delay_ms=1", "-p", "drain_timeout_s=30", "--repeat", "1", "--warmup", "0",
                 "--no-build", "--no-probe"]) == 0
    s = Store(store)
    (m,) = s.measurements(s.resolve("latest"))
    assert m["status"] == "ok", m["error"]
    assert m["verify"]["users"] == 9 and m["verify"]["received"] == m["verify"]["sent"] > 0
    assert m["verify"]["cross_group"] == 0 and m["verify"]["self_deliveries"] == 0
    metrics = m["metrics"]
    assert metrics["connections_opened_count"] == metrics["connections_held_count"] == 9
    for name in ("memory_per_connection_bytes", "server_cpu_percent", "loadgen_cpu_percent", "connect_p99_us",
                 "latency_p99_us", "server_window_cpu_percent", "loadgen_window_cpu_percent"):
        assert name in metrics
    if think_ms:
        assert "achieved_send_ratio" in metrics
    names = set().union(*m["series"])
    assert {"server_rss_bytes", "server_cpu_ns", "server_connections_count", "loadgen_cpu_ns",
            "loadgen_rss_bytes"} <= names
    assert any(n.startswith("server_") and n not in {"server_rss_bytes", "server_peak_rss_bytes", "server_cpu_ns",
                                                      "server_connections_count", "server_processes_count"}
               for n in names), "the server's runtime view is missing from the series"
    assert results.run_document(s, [s.resolve("latest")])["runs"][0]["summary"]
    assert not processes_matching("msgbench-chatload")
    assert not processes_matching("--chat-server") and not processes_matching("--listen")
