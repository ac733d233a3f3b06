"""Real brokers from Debian's packages: start, readiness, CPU, logs, death, cleanup."""

import dataclasses
import functools
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from typing import ClassVar

import pytest

from msgbench.cli import main as run_cli
from msgbench.core import tempdirs
from msgbench.data.store import Store
from msgbench.running import services
from msgbench.workers import catalogue, targets
from tests.conftest import processes_matching

REQUIRE_ALL = os.environ.get("MSGBENCH_REQUIRE_ALL_TARGETS") == "1"


def need(name: str) -> catalogue.ServiceSpec:
    service = catalogue.spec(name)
    if not catalogue.installed(service):
        if REQUIRE_ALL:
            pytest.fail(f"{service.binary} is not installed ({service.install_command()})")
        pytest.skip(f"{service.binary} is not installed")
    return service


def pid_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    with open(f"/proc/{pid}/stat") as f:  # a zombie is gone for our purposes
        return f.read().rsplit(")", 1)[1].split()[0] == "Z"


class LowestFreePortKernel:
    """A socket whose bind to port 0 gets the lowest port no open socket holds, as a
    kernel may: a port closed a moment ago is handed out again."""
    held: ClassVar[set[int]] = set()  # the ports open sockets hold, machine-wide

    def __init__(self, *args):
        self.port = None

    def bind(self, address):
        self.port = min(set(range(40000, 40100)) - self.held)
        self.held.add(self.port)

    def getsockname(self):
        return ("127.0.0.1", self.port)

    def close(self):
        self.held.discard(self.port)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def test_a_broker_s_ports_are_distinct_even_where_the_kernel_hands_a_closed_port_out_again(monkeypatch):
    """Kafka's listener and controller once got the same port in CI, each asked for
    alone; they are asked for together now."""
    monkeypatch.setattr(LowestFreePortKernel, "held", set())
    monkeypatch.setattr(services.socket, "socket", LowestFreePortKernel)
    running = services.Running(catalogue.spec("kafka"))
    try:
        assert sorted(running.ports) == ["controller", "main"]
        assert running.ports["main"] != running.ports["controller"]
    finally:
        shutil.rmtree(running.tmp)
    assert services.free_ports(3) == [40000, 40001, 40002]


@pytest.mark.parametrize("name", sorted(catalogue.SERVICES))
def test_each_service_starts_answers_its_protocol_and_stops_without_a_trace(name):
    running = services.Running(need(name))
    running.start()
    pids = [p.pid for p in running.procs]
    assert running.alive()
    assert running.url.endswith(f"127.0.0.1:{running.port}")
    with socket.create_connection(("127.0.0.1", running.port), timeout=5) as sock:
        sock.settimeout(5)
        assert running.spec.ready(sock)
    assert running.cpu_ms() >= 0
    log = running.stop()
    assert log.strip(), "the server's log is kept"
    assert all(pid_gone(pid) for pid in pids)
    assert not running.tmp.exists()
    assert not processes_matching(str(running.tmp))


def test_a_taken_port_is_a_clear_error_and_leaves_nothing_running():
    service = need("redis")
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        running = services.Running(service, ports={"main": port})
        with pytest.raises(services.ServiceError, match=rf"exited with code \d+ while starting on 127.0.0.1:{port}"):
            running.start()
        assert "in use" in running.stop().lower()


def test_an_unknown_service_names_the_known_ones():
    with pytest.raises(services.ServiceError,
                       match="unknown service 'pulsar'; known services: jetstream, kafka, mosquitto, nats"):
        catalogue.spec("pulsar")


def session_members(sid: int) -> list[int]:
    """Live processes of a session (the broker's; zombies excluded)."""
    found = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


# rabbitmq: the server script runs beam as its child, and stops it when it gets the
# parent-death signal; kafka: the launcher copies the formatted log directory, then execs the JVM;
# redis-server and nats-server (jetstream) are the direct child.
@pytest.mark.parametrize("name", ["redis", "rabbitmq", "kafka", "jetstream"])
def test_a_harness_killed_with_sigkill_takes_its_broker_along_and_the_next_sweeps_its_directory(
        name, tmp_path, monkeypatch):
    need(name)
    sid_file = tmp_path / "sid"
    script = textwrap.dedent(f"""
        import time
        from msgbench.running import services
        from msgbench.workers import catalogue, targets
        running = services.Running(catalogue.spec({name!r}))
        running.start()
        open({str(sid_file)!r}, "w").write(" ".join(str(p.pid) for p in running.procs))
        time.sleep(120)
    """)
    tmp = tmp_path / "tmp"  # the harness's TMPDIR, where its broker's directory is made
    tmp.mkdir()
    harness = subprocess.Popen([sys.executable, "-c", script], env=os.environ | {"TMPDIR": str(tmp)})
    deadline = time.monotonic() + 120
    while not sid_file.exists() or not sid_file.read_text():
        assert time.monotonic() < deadline, f"{name} did not start"
        time.sleep(0.2)
    sessions = [int(pid) for pid in sid_file.read_text().split()]
    assert all(session_members(sid) for sid in sessions)
    harness.send_signal(signal.SIGKILL)
    harness.wait()
    deadline = time.monotonic() + 30
    while any(session_members(sid) for sid in sessions):
        assert time.monotonic() < deadline, f"{name} outlived the harness killed with SIGKILL"
        time.sleep(0.2)
    # its directory stays (nothing of it runs to remove it); the next harness sweeps it
    left = [p.name for p in tmp.iterdir()]
    assert [n.startswith(f"{services.TEMP_PREFIX}{harness.pid}-{name}-") for n in left] == [True]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    assert tempdirs.sweep(services.TEMP_PREFIX) == [str(tmp / left[0])]
    assert not any(tmp.iterdir())


def test_a_run_starts_the_broker_measures_its_cpu_keeps_its_log_and_survives_its_death(fake_targets, capsys):
    need("redis")
    code = run_cli(["run", "pubsub", "--target", "fakebroker", "--variant", "ok,killbroker",
                    "-p", "duration_s=0.1", "--repeat", "2", "--warmup", "0", "--no-build"])
    assert code == 1  # some measurements failed
    store = Store(fake_targets)
    run_id = store.resolve("latest")
    measured = store.measurements(run_id)
    ok = [m for m in measured if m["variant"] == "ok"]
    killed = [m for m in measured if m["variant"] == "killbroker"]
    # the broker was restarted after each death, so every ok measurement still reached it
    assert [m["status"] for m in ok] == ["ok", "ok"]
    assert all(m["metrics"]["broker_cpu_ms"] >= 0 for m in ok)
    assert [m["status"] for m in killed] == ["failed", "failed"]
    assert all("service redis" in m["error"] and "died during the measurement" in m["error"] for m in killed)
    logs = store.logs(run_id)
    assert set(logs) == {"redis", "redis#2"}  # ok, killed, restarted: ok, killed
    assert all("Ready to accept connections" in text for text in logs.values())
    notes = store.run(run_id)["notes"]
    assert sum("had died" in n and "restarted" in n for n in notes) == 1
    # each redis-server (its pid starts its log lines, "1234:M ...") is gone
    pids = {int(text.split(":", 1)[0]) for text in logs.values()}
    assert len(pids) == 2 and all(pid_gone(pid) for pid in pids)
    capsys.readouterr()
    assert run_cli(["logs", "latest", "redis#2"]) == 0
    assert "Ready to accept connections" in capsys.readouterr().out
    assert run_cli(["logs", "latest", "nats"]) == 2
    assert "has no log 'nats'; its logs: redis, redis#2" in capsys.readouterr().err


def test_a_missing_broker_is_named_with_its_install_command_before_anything_runs(fake_targets, monkeypatch, capsys):
    monkeypatch.setattr(catalogue, "installed", lambda service: service.name != "redis")
    code = run_cli(["run", "pubsub", "--target", "fakebroker", "--repeat", "1", "--no-build"])
    assert code == 2
    err = capsys.readouterr().err
    assert "target fakebroker needs redis-server (service redis), which is not installed" in err
    assert "apt-get install -y redis-server" in err
    assert not Store(fake_targets).runs()


def test_a_target_whose_broker_is_missing_still_builds(fake_targets, monkeypatch, capsys):
    """A broker is needed to run a target, not to build it: on a fresh machine reference's
    build comes before the kafka build that fetches the broker its Kafka tools use."""
    monkeypatch.setattr(catalogue, "installed", lambda service: service.name != "redis")
    fakebroker = targets.target("fakebroker")
    assert fakebroker.missing_requirements() == ["redis-server (service redis)"]
    assert fakebroker.missing_requirements(services=False) == []
    assert run_cli(["build"]) == 0
    err = capsys.readouterr().err
    assert "skip fakebroker" not in err and "skip missing: needs msgbench-no-such-runtime" in err
    assert "building " in err and "fakebroker" in err.split("building ", 1)[1].splitlines()[0]


def test_a_payload_below_the_header_is_refused_with_the_range(fake_targets, capsys):
    code = run_cli(["run", "pubsub", "--target", "fakebroker", "-p", "payload_bytes=0", "--no-build"])
    assert code == 2
    assert "payload_bytes = 0 is out of range" in capsys.readouterr().err


def test_more_source_threads_than_sources_is_refused(fake_targets, capsys):
    code = run_cli(["run", "pubsub", "--target", "fakebroker", "-p", "source_threads=2", "--no-build"])
    assert code == 2
    assert "source_threads = 2 and sources = 1: pubsub requires source_threads <= sources" in capsys.readouterr().err


def test_a_broker_that_a_build_fetches_asks_for_no_debian_package(fake_targets, monkeypatch):
    """Kafka's broker comes with the kafka target's build: on a fresh clone the reference
    target, whose tools use it, must not make the installer run apt-get for packages
    that are all there already."""
    monkeypatch.setattr(catalogue, "installed", lambda service: service.name != "kafka")
    t = dataclasses.replace(targets.target("fakebroker"), services=("kafka",), packages=("fake-package",),
                            variants={n: dataclasses.replace(v, services=())
                                      for n, v in targets.target("fakebroker").variants.items()})
    # functools.cache, as the real registry is: fake_targets clears it as it ends
    monkeypatch.setattr(targets, "registry", functools.cache(lambda: {"fakebroker": t}))
    assert t.missing_requirements() == [f"{catalogue.spec('kafka').binary} (service kafka)"]
    assert targets.missing_packages() == []
    monkeypatch.setattr(catalogue, "installed", lambda service: service.name != "kafka" and service.name != "redis")
    t = dataclasses.replace(t, services=("kafka", "redis"))
    monkeypatch.setattr(targets, "registry", functools.cache(lambda: {"fakebroker": t}))
    assert targets.missing_packages() == ["fake-package"]
