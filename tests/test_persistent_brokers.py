"""Kafka and JetStream, the durable brokers: a broker killed in the middle of a
measurement fails that measurement with a message naming it, its log is kept, the run
goes on with a restarted broker, and nothing of either is left running."""

import os
import signal
import threading
import time

import pytest

from msgbench.cli import main as run_cli
from msgbench.data.store import Store
from msgbench.workers import catalogue, targets
from tests.conftest import MARKER, marked_command_lines, ready_target
from tests.test_services import need, pid_gone

pytestmark = pytest.mark.targets


def command_lines() -> dict[int, str]:
    found = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                    found[int(entry.name)] = f.read().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
    return found


def kill_broker_while_measuring(service: str, worker: str, broker_marker: str, killed: list[int]) -> None:
    """Once the worker runs (its sources publishing), SIGKILL the broker this process started.

    The worker looked for is this test's own (marked): another test's worker of the same
    target, running at the same time (make test runs tests side by side), would have the
    broker killed before this one's worker has even connected."""
    own = f"msgbench-service-{os.getpid()}-{service}-"
    marker = os.environ[MARKER]
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        lines = marked_command_lines(marker)
        if any(worker in cmd and "--serve" not in cmd and "--version" not in cmd for cmd in lines.values()):
            time.sleep(1.0)  # into the timed section
            for pid, cmd in command_lines().items():
                if own in cmd and broker_marker in cmd:
                    os.kill(pid, signal.SIGKILL)
                    killed.append(pid)
            return
        time.sleep(0.05)


@pytest.mark.parametrize("target, service, broker_marker", [
    ("kafka", "kafka", "kafka.Kafka"),
    ("jetstream", "jetstream", "nats-server"),
])
def test_a_broker_killed_mid_measurement_is_named_by_the_run(target, service, broker_marker, tmp_path,
                                                               monkeypatch, capsys):
    need(service)
    ready_target(target)
    monkeypatch.setenv("MSGBENCH_STORE", str(tmp_path / "store.sqlite"))
    killed: list[int] = []
    killer = threading.Thread(target=kill_broker_while_measuring,
                              args=(service, f"msgbench-{target}", broker_marker, killed), daemon=True)
    killer.start()
    run_cli(["run", "pubsub", "--target", target, "-p", "duration_s=4", "-p", "drain_ms=2000",
                    "--repeat", "2", "--warmup", "0", "--no-build", "--cpus", "unpinned"])
    killer.join(timeout=5)
    assert killed, f"the {service} broker was never seen running beside the worker"
    store = Store(tmp_path / "store.sqlite")
    run_id = store.resolve("latest")
    measured = store.measurements(run_id)
    assert [m["status"] for m in measured] == ["failed", "ok"], [(m["status"], m["error"]) for m in measured]
    assert f"service {service}" in measured[0]["error"] and "died during the measurement" in measured[0]["error"]
    # The worker was stopped as its broker died, not at the point's time limit (76 s here,
    # the spec's floor): a Kafka client retries a dead broker for minutes.
    assert measured[0]["worker"]["wall_s"] < 30, measured[0]["worker"]
    # the second measurement ran on a restarted broker, and both logs were kept
    assert set(store.logs(run_id)) == {service, f"{service}#2"}
    assert sum("had died" in n for n in store.run(run_id)["notes"]) == 1
    assert all(pid_gone(pid) for pid in killed)
    assert not [cmd for cmd in command_lines().values() if f"msgbench-service-{os.getpid()}-{service}-" in cmd]
    capsys.readouterr()


def test_the_kafka_broker_is_not_missing_before_the_build_that_fetches_it(monkeypatch):
    """bin/kafka-broker comes from the kafka target's own build: before it, the target is
    buildable (msgbench build and make test's install do not skip it), not 'not installed'."""
    monkeypatch.setattr(catalogue, "installed", lambda service: service.name != "kafka")
    targets.registry.cache_clear()
    assert not [m for m in targets.target("kafka").missing_requirements() if "service kafka" in m]
    assert catalogue.spec("kafka").install_command() == "make -C targets/kafka build"
