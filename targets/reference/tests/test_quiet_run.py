"""quiet_run: tools run to their end under GNU time, awaited on pidfds, none left behind."""

import os
import sys
import time
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(FOLDER))
import quiet_run  # noqa: E402
from params import Failure  # noqa: E402

pytestmark = pytest.mark.skipif(not os.access(quiet_run.GNU_TIME, os.X_OK), reason="GNU time is not installed")
ALLOCATE = "import sys; block = bytearray(int(sys.argv[1]) << 20); block[::4096] = b'x' * len(block[::4096])"


def test_peak_rss_is_the_tool_s_own_not_the_forking_worker_s():
    # The worker (this pytest) holds far more than a small tool: the figure must be the tool's.
    ballast = bytearray(200 << 20)
    ballast[::4096] = b"y" * len(ballast[::4096])
    small, large = quiet_run.run_all([["sleep", "0"], [sys.executable, "-c", ALLOCATE, "96"]], 30)
    assert small.returncode == 0 and large.returncode == 0
    assert small.peak_rss < 16 << 20, f"sleep's peak RSS {small.peak_rss} is not this worker's {len(ballast)}"
    assert 96 << 20 <= large.peak_rss < 160 << 20, large.peak_rss


def test_outputs_and_exit_status_are_the_tool_s():
    run, = quiet_run.run_all([["sh", "-c", "echo out; echo err >&2; exit 3"]], 30)
    assert (run.stdout, run.stderr, run.returncode) == ("out\n", "err\n", 3)
    assert "msgbench-peak-rss" not in run.stderr, "GNU time's report goes to its own file"


def test_the_time_limit_kills_the_tool_and_leaves_nothing(tmp_path):
    pid_file = tmp_path / "pid"
    started = time.monotonic()
    with pytest.raises(Failure) as caught:
        quiet_run.run_all([["sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"]], 1)
    assert caught.value.kind == "internal" and "did not finish within 1 s" in caught.value.message
    assert time.monotonic() - started < 10
    assert not running(int(pid_file.read_text())), "the tool itself, GNU time's child, was killed too"


def running(pid: int, within_s: float = 5) -> bool:
    """Whether pid still runs after within_s (a zombie waiting for init to reap it is dead)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False
        if state == "Z":
            return False
        time.sleep(0.05)
    return True


def test_it_sleeps_while_the_tool_runs():
    # Awaited on a pidfd: the worker uses no CPU while a 1 s tool runs (a 2 ms loop used ~50 ms).
    before = time.process_time()
    quiet_run.run_all([["sleep", "1"]], 30)
    assert time.process_time() - before < 0.03
