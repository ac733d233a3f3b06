"""The shield (msgbench tune): the machine's other processes kept off the measured CPUs by
the kernel's cpusets, the measured processes let in, and everything put back by --revert.

The real kernel does the work here. The test builds its own child cpuset and makes it the
"machine" (MSGBENCH_CPUSET_ROOT), holding this test process and a stand-in for other work,
so that only those move, never the rest of the host."""

import os
import signal
import subprocess
from pathlib import Path

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.running import tuning
from msgbench.workers import cpus, shield

# The shield moves processes between cpusets and restores their own CPU masks: alone,
# after the parallel tests (make test-harness), with no other test's processes moving.
pytestmark = pytest.mark.alone

ROOT = Path("/sys/fs/cgroup/cpuset")
needs_cpusets = pytest.mark.skipif(
    os.geteuid() != 0 or not (ROOT / "cgroup.procs").is_file() or len(os.sched_getaffinity(0)) < 2,
    reason="needs root, a cgroup v1 cpuset hierarchy and two CPUs")


def cpuset_of(pid: int) -> str:
    return Path(f"/proc/{pid}/cpuset").read_text().strip()


@pytest.fixture
def machine(monkeypatch, tmp_path):
    """A child cpuset standing in for the whole machine: this process and one other in it."""
    base = ROOT / f"msgbench-test-{os.getpid()}"
    base.mkdir()
    (base / "cpuset.cpus").write_text((ROOT / "cpuset.cpus").read_text())
    (base / "cpuset.mems").write_text((ROOT / "cpuset.mems").read_text())
    other = subprocess.Popen(["sleep", "300"])
    pinned = subprocess.Popen(["taskset", "-c", "1", "sleep", "300"])  # a user's own placement
    home = cpuset_of(os.getpid())
    try:
        for pid in (os.getpid(), other.pid, pinned.pid):
            (base / "cgroup.procs").write_text(str(pid))
        monkeypatch.setenv(shield.BASE_ENV, str(base))
        monkeypatch.setenv(tuning.ROOT_ENV, str(tmp_path / "sysfs"))  # no real /sys values changed
        yield base, other, pinned
    finally:
        for proc in (other, pinned):
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        for name in (shield.REST, shield.MEASURED, ""):
            folder = base / name if name else base
            if folder.is_dir():
                for pid in (folder / "cgroup.procs").read_text().split():
                    (ROOT / home.lstrip("/") / "cgroup.procs").write_text(pid)
                folder.rmdir()


@needs_cpusets
def test_tune_keeps_other_work_off_the_measured_cpus_and_revert_puts_it_back(machine, fake_targets, capsys):
    base, other, pinned = machine
    split = cpus.layout(cpus.PINNED)
    out = tuning.tune()
    assert any(line.startswith(f"shield: CPUs {cpus.cpu_list(split.measured)} kept") for line in out), out
    # The other work, and the harness itself, now run on the harness's CPUs only.
    for pid in (other.pid, os.getpid()):
        assert cpuset_of(pid).endswith(shield.REST)
        assert cpus.allowed(pid) == split.harness
    up = shield.active()
    assert up is not None and up.measured == split.measured
    layout = cpus.layout(cpus.PINNED)
    assert layout.shielded and layout.measured == split.measured and "shielded" in layout.describe()

    # A run measures on the shielded CPU although its harness cannot run there.
    ring = ["run", "ring", "--target", "fake", "-p", "n=10", "-p", "m=1", "--repeat", "2", "--warmup", "0",
            "--no-build", "--cpus", "pinned"]
    assert main(ring) == 0
    store = Store(fake_targets)
    run = store.runs()[0]
    assert run["metadata"]["cpu_placement"]["shielded"] is True
    for m in store.measurements(run["id"]):
        assert m["status"] == "ok"
        seen = m["worker"]["cpu_placement"]["seen"]
        assert seen and all(cpus.parse_cpu_list(c) == split.measured for c in seen.values())
    assert "shielded" in capsys.readouterr().out

    lines = tuning.revert()
    assert any(line.startswith("shield removed") for line in lines), lines
    assert shield.active() is None
    assert not (base / shield.REST).exists() and not (base / shield.MEASURED).exists()
    for pid in (other.pid, os.getpid()):
        assert cpuset_of(pid) == "/" + base.name
        assert cpus.allowed(pid) == cpus.parse_cpu_list((base / "cpuset.cpus").read_text())
    assert cpus.allowed(pinned.pid) == {1}  # its own mask back, not the whole machine's


@needs_cpusets
def test_unpinned_under_a_shield_gives_the_worker_the_whole_machine(machine, tmp_path):
    base, _, _ = machine
    shield.build(frozenset({0}), frozenset({1}), tmp_path / "masks.json")
    try:
        assert shield.path_for(None) == str(base)  # left to the scheduler: every CPU again
        assert shield.path_for(frozenset({1})) == str(base / shield.MEASURED)
        assert shield.path_for(frozenset({0})) is None  # already where the harness is
        assert cpus.layout(cpus.UNPINNED).measured is None
    finally:
        shield.remove(tmp_path / "masks.json")


def test_tune_says_why_it_cannot_shield_where_there_are_no_cpusets(monkeypatch, tmp_path):
    monkeypatch.setenv(shield.BASE_ENV, str(tmp_path / "none"))
    assert not shield.available() and shield.active() is None
    assert shield.path_for(frozenset({1})) is None
    with pytest.raises(shield.ShieldError, match=r"no cgroup v1 cpuset hierarchy at .*none"):
        shield.build(frozenset({0}), frozenset({1}), tmp_path / "masks.json")
