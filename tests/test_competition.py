"""A measurement that competed with other work on the machine says so, and names it."""

import os
import shutil
import subprocess
import sys
import threading

import pytest

from msgbench.cli import main
from msgbench.data import noise, results
from msgbench.data.store import Store
from tests.conftest import marked_command_lines

BURN = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end: pass\n"


SLOW_RING = ["run", "ring", "--target", "fake", "--variant", "slow", "-p", "n=10", "--repeat", "2", "--warmup", "0",
             "--no-build", "--no-probe"]


def run_beside(command: list[str], **popen) -> tuple[int, list[int]]:
    """A slow fake ring run with one `command` per core running beside it the whole time;
    the exit code and the commands' pids."""
    others = [subprocess.Popen(command, **popen) for _ in range(os.cpu_count() or 1)]
    try:
        return main(SLOW_RING), [p.pid for p in others]
    finally:
        for other in others:
            other.kill()
            other.wait()


def test_other_work_during_a_measurement_is_measured_and_warned_of(fake_targets, capsys):
    code, _ = run_beside([sys.executable, "-c", BURN])
    assert code == 0
    store = Store(fake_targets)
    run_id = store.runs()[0]["id"]
    shares = [m["worker"]["other_cpu_share"] for m in store.measurements(run_id)]
    assert all(share > 0.3 for share in shares), shares  # a burner per core, against a sleeping worker
    assert "machine busy" in capsys.readouterr().out  # counted in the table's summary of warnings
    assert main(["show", run_id, "--warnings"]) == 0  # and said in full in the list of them all
    out = capsys.readouterr().out
    assert "other work on the machine took up to" in out and "during 2 of 2 repetitions" in out


@pytest.mark.skipif(not shutil.which("sha256sum"), reason="needs sha256sum (coreutils)")
def test_a_cpu_hog_beside_a_measurement_is_named_as_its_cause(fake_targets, capsys):
    # One per core, ahead of other work in the scheduler's eyes (nice -10, as root; a plain
    # nice 0 otherwise), so that each is among the busiest on a machine others share too.
    code, hogs = run_beside(["nice", "-n", "-10", "sha256sum", "/dev/zero"], stderr=subprocess.DEVNULL)
    assert code == 0
    store = Store(fake_targets)
    run_id = store.runs()[0]["id"]
    pids = set(hogs)
    stored = [m["worker"]["other_work"] for m in store.measurements(run_id)]
    for work in stored:
        named = [p for p in work["processes"] if p["pid"] in pids]
        assert named and {p["name"] for p in named} == {"sha256sum"}, work
    capsys.readouterr()
    assert main(["show", run_id, "--warnings"]) == 0
    out = capsys.readouterr().out
    # The warning names the largest causes: the hogs, unless this shared machine is so
    # loaded that four others took more (then those are what it must name).
    causes = [label for label, _ in noise.causes(stored)[:4]]
    assert causes[0] in out, out
    assert any(f"sha256sum (pid {pid})" in out for pid in pids) or not any("sha256sum" in c for c in causes), out
    assert "do not trust this point" in out


def test_a_measurement_names_nothing_of_its_own(fake_targets, test_marker):
    """The harness, the worker and what it started are the measurement, never its "other
    work". (This machine is shared: other people's processes may be named, so the control
    is that none of this test's own is.) The harness is made busy (a spinning thread in
    this process, which is the harness) so that leaving it in would name it."""
    spinning = threading.Event()
    spinning.set()

    def spin():
        while spinning.is_set():
            pass

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    try:
        assert main(["run", "ring", "--target", "fake", "--variant", "slow", "-p", "n=10", "--repeat", "1",
                     "--warmup", "0", "--no-build", "--no-probe"]) == 0
        ours = marked_command_lines(test_marker)  # what this test started and still runs
    finally:
        spinning.clear()
        spinner.join()
    store = Store(fake_targets)
    (m,) = store.measurements(store.runs()[0]["id"])
    work = m["worker"]["other_work"]
    assert set(work) == {"processes", "kernel_threads", "kernel_thread_names", "steal", "irq"}
    assert not [p for p in work["processes"] if p["pid"] == os.getpid() or p["pid"] in ours], work


def test_kernel_threads_and_steal_are_told_apart_from_processes(tmp_path):
    def fake_proc(ticks: dict, steal: int) -> str:
        root = tmp_path / f"proc{steal}"
        root.mkdir()
        (root / "stat").write_text(f"cpu  100 0 50 1000 0 3 4 {steal} 0 0\n")
        for pid, (name, parent, used) in ticks.items():
            (root / str(pid)).mkdir()
            (root / str(pid) / "stat").write_text(
                f"{pid} ({name}) S {parent} {pid} {pid} 0 -1 0 0 0 0 0 {used} 0 0 0 20 0 1 0 77 0 0\n")
        return str(root)

    before = noise.snapshot(fake_proc({10: ("ksoftirqd/0", 2, 0), 20: ("my hog) x", 1, 0)}, steal=0))
    after = noise.snapshot(fake_proc({10: ("ksoftirqd/0", 2, 30), 20: ("my hog) x", 1, 50)}, steal=10))
    after.at = before.at + 1.0  # one second, two CPUs: 2 * CLK_TCK ticks
    work = noise.other_work(before, after, set(), set(), cpus=2)
    hz = os.sysconf("SC_CLK_TCK")
    assert work["processes"] == [{"name": "my hog) x", "pid": 20, "share": round(50 / (2 * hz), 3)}]
    assert work["kernel_threads"] == round(30 / (2 * hz), 3) and work["kernel_thread_names"] == ["ksoftirqd/0"]
    assert work["steal"] == round(10 / (2 * hz), 3)
    assert noise.other_work(before, after, {20}, set(), cpus=2)["processes"] == []  # the harness: left out
    assert noise.other_work(before, after, set(), {20}, cpus=2)["processes"] == []  # the worker's session


def test_busy_only_with_its_own_kernel_work_is_said_to_stand():
    worker = {"other_cpu_share": 0.3, "other_work": {"processes": [], "kernel_threads": 0.25,
                                                     "kernel_thread_names": ["ksoftirqd/1"], "steal": 0, "irq": 0}}
    (text,) = results._competition_warnings([{"worker": worker}])
    assert "kernel threads (ksoftirqd/1) 25%" in text and "the point stands" in text
