"""`msgbench capacity` across hosts, on the real thing: hosts in network namespaces reached
by real ssh (msgbench.hosts.testbed, test_hosts.py's fixture), a real broker, short steps
and a loose bound so that a search ends in seconds. Each step must be an ordinary stored,
verified measurement that says where each role ran; the search must answer (a capacity,
or why not); nothing may be left behind on any host or here."""

import os
import tempfile
from pathlib import Path

import pytest

from msgbench.data import results
from msgbench.data.store import Store
from msgbench.hosts import inventory as hosts
from msgbench.running import capacity, services
from tests.conftest import processes_matching, ready_target
from tests.test_hosts import bed, chat_ready, nats_ready, needs_bed, settled  # noqa: F401 (bed: a fixture)
from tests.test_runner import run_cli

# Under pytest -n with the other tests that make network namespaces (tests/test_hosts.py):
# the testbed once, not once per worker.
pytestmark = pytest.mark.xdist_group("netns")

# A search that ends fast: short steps, two or three of them (--max-steps), one run at the
# top, a bound any working system meets at these loads (the path is tested, not a figure).
QUICK = ["--confirm", "1", "--no-build", "--no-probe"]


def capacity_on_hosts(bed, monkeypatch, store_path: Path, *args: str) -> int:  # noqa: F811 (bed: the fixture's value)
    """msgbench capacity ARGS across the testbed's hosts, a QUICK search, into store_path."""
    monkeypatch.setenv("MSGBENCH_STORE", str(store_path))
    return run_cli("capacity", *args, *QUICK, "--hosts", str(bed.inventory))


def the_run(store_path: Path) -> dict:
    store = Store(store_path)
    return results.run_document(store, [store.resolve("latest")])["runs"][0]


def left_here() -> list[str]:
    """This test process's temporary directories (brokers', ssh control sockets') still in /tmp."""
    mine = (f"{services.TEMP_PREFIX}{os.getpid()}-", f"{hosts.TEMP_PREFIX}{os.getpid()}-")
    return [name for name in os.listdir(tempfile.gettempdir()) if name.startswith(mine)]


def nothing_left(bed) -> None:  # noqa: F811 (bed: the fixture's value)
    assert settled(bed) == {}  # no process on any host (their sshd aside)
    assert processes_matching("nats-server") == [] and processes_matching("ssh -F") == []
    assert processes_matching("msgbench-") == []
    assert left_here() == []


@needs_bed
def test_pubsub_capacity_with_the_receivers_on_another_host(bed, tmp_path, monkeypatch, capsys):  # noqa: F811
    """nats (the broker here, reached from h2 at this machine's address there) and tcp
    (brokerless: the receivers listen on h2's address, not its loopback)."""
    nats_ready()
    ready_target("tcp")
    code = capacity_on_hosts(bed, monkeypatch, tmp_path / "store.sqlite", "pubsub", "--target", "nats,tcp",
                             "--slo", "p99=2s", "-p", "payload_bytes=64", "-p", "duration_s=0.5", "--start", "200",
                             "--max-steps", "3", "--place", "receivers=h2")
    out = capsys.readouterr().out
    assert code == 0, out
    run = the_run(tmp_path / "store.sqlite")
    assert run["status"] == "complete"
    found = run["metadata"]["capacity"]["results"]
    assert set(found) == {"nats/default", "tcp/default"}
    steps = [m for m in run["measurements"] if not m["warmup"]]
    assert len(steps) == sum(r["steps"] for r in found.values()) >= 4
    for m in steps:
        assert m["status"] == "ok", m["error"]
        assert m["verify"]["received"] == m["verify"]["published"] > 0 and m["verify"]["lost"] == 0
        # Where each role ran, with the measurement: the receivers on h2, the rest here.
        assert m["worker"]["placement"] == {"broker": "local", "sources": "local", "receivers": "h2"}
        assert m["worker"]["histograms"]["latency_ns"]
        # The receivers ran under the remote wrapper on h2 (its report, relayed by the sources).
        assert '"why": "exited"' in m["stderr_tail"] and "msgbench-remote {" in m["stderr_tail"]
    for label, result in found.items():
        # Under a 2 s bound a step fails only if it delivers under 99% of its offered
        # rate over its half second, which a loaded machine (make test's parallel
        # workers) can cause at 200/s: the search then goes below it. Either way it
        # ends with a load that held, confirmed (found) or, with three steps, not.
        assert result["status"] in (capacity.FOUND, capacity.STEP_LIMIT), result
        assert result["capacity"] is not None and result["capacity"] > 0, result
        assert f"{label}: " in out
    notes = " ".join(run["notes"])
    assert f"role receivers ran on h2 ({bed.hosts['h2']})" in notes
    assert "pubsub's one-way latency is on one clock" in notes  # namespaces: one kernel
    assert "service nats nats-server: " in notes and f"on nats://{bed.harness_address}:" in notes
    assert set(run["metadata"]["hosts"]) == {"h2"}
    nothing_left(bed)


@needs_bed
def test_a_capacity_whose_latency_would_cross_two_clocks_is_refused_in_one_line(bed, tmp_path, monkeypatch,  # noqa: F811
                                                                               capsys):
    """h2 made to report another kernel (boot id): its CLOCK_MONOTONIC is not the sources' one."""
    nats_ready()
    real = hosts.facts
    monkeypatch.setattr(hosts, "facts", lambda ssh, host: real(ssh, host) | (
        {"boot_id": "another-kernel"} if host.alias == "h2" else {}))
    code = capacity_on_hosts(bed, monkeypatch, tmp_path / "store.sqlite", "pubsub", "--target", "nats",
                             "--slo", "p99=2s", "-p", "duration_s=0.5", "--max-steps", "3", "--place", "receivers=h2")
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert "two kernels" in err[-1] and "place sources and receivers on one host" in err[-1], err
    run = the_run(tmp_path / "store.sqlite")
    assert run["status"] == "failed" and not run["measurements"]  # nothing was measured
    nothing_left(bed)


@needs_bed
def test_chat_capacity_with_the_server_and_its_load_generator_on_two_hosts(bed, tmp_path, monkeypatch,  # noqa: F811
                                                                           capsys):
    chat_ready()
    code = capacity_on_hosts(bed, monkeypatch, tmp_path / "store.sqlite", "chat", "--target", "go", "--slo", "p99=2s",
                             "-p", "duration_s=1", "-p", "clients_per_group=3", "-p", "think_ms=100",
                             "-p", "drain_timeout_s=10", "--start", "6", "--max-steps", "2",
                             "--place", "server=h1,clients=h2")
    out = capsys.readouterr().out
    assert code == 0, out
    run = the_run(tmp_path / "store.sqlite")
    (result,) = run["metadata"]["capacity"]["results"].values()
    steps = [m for m in run["measurements"] if not m["warmup"]]
    assert 1 <= len(steps) == result["steps"] <= 2
    for m in steps:
        assert m["status"] == "ok", m["error"]
        assert m["verify"]["received"] == m["verify"]["sent"] > 0
        assert m["verify"]["users"] == m["params"]["groups"] * 3
        assert m["worker"]["placement"] == {"server": "h1", "clients": "h2"}
        parts = {(p["role"], p["host"]) for p in m["worker"]["parts"]}
        assert parts == {("server", "h1"), ("clients", "h2")}
    # The answer, or why there is none: two steps end the search at the step limit with
    # the highest load held, or, if neither held on a loaded machine, with why not.
    assert result["status"] in (capacity.FOUND, capacity.STEP_LIMIT, capacity.NEVER), result
    assert result["why"] and "go/default: " in out
    assert "role server ran on h1" in " ".join(run["notes"])
    nothing_left(bed)


def test_a_broker_here_listens_where_the_placed_roles_see_this_machine(tmp_path):
    """Loopback unless a worker or peer runs on a host; then the one address those hosts see
    this machine at; two different addresses, or none known, are refused in one line."""
    from types import SimpleNamespace

    from msgbench.hosts import placement
    from msgbench.running import workloads as workload_runs

    (tmp_path / "hosts.toml").write_text("[hosts.h1]\n[hosts.h2]\n[hosts.h3]\n")
    job = SimpleNamespace(scenario=SimpleNamespace(workload="pubsub"), params={"rate": 100})

    def peers(place: str, seen: dict) -> placement.Peers:
        made = placement.Peers([job], inventory=hosts.load_inventory(tmp_path / "hosts.toml"),
                               place=placement.parse_place(place), roles=workload_runs.roles({"pubsub"}))
        made.ssh = object()  # reached (no connection is opened here)
        made.facts = {alias: {"harness_address": address} for alias, address in seen.items()}
        return made

    assert peers("receivers=h2", {"h2": "10.0.0.1"}).service_address() == "10.0.0.1"
    assert peers("sources=h2,receivers=h3", {"h2": "10.0.0.1", "h3": "10.0.0.1"}).service_address() == "10.0.0.1"
    assert peers("broker=h1,receivers=h2", {"h1": "10.0.0.1", "h2": "10.0.0.1"}).service_address() is None
    assert peers("receivers=local", {}).service_address() is None
    with pytest.raises(placement.PlacementError, match=r"different addresses \(h2 at 10.0.0.1, h3 at 10.9.0.1\)"):
        peers("sources=h2,receivers=h3", {"h2": "10.0.0.1", "h3": "10.9.0.1"}).service_address()
    with pytest.raises(placement.PlacementError, match="host h2 did not say which address"):
        peers("receivers=h2", {"h2": "?"}).service_address()
    where = peers("sources=h2", {"h2": "10.0.0.1"}).placement_of(job)
    assert where == {"broker": "local", "sources": "h2", "receivers": "h2"}  # receivers beside the sources
