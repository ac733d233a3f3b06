"""Ctrl-C in the middle of a run: what was measured stays, nothing is left running."""

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from msgbench.core import interrupts
from msgbench.core.paths import REPO_ROOT
from msgbench.data.store import Store
from tests.conftest import FIXTURE_TARGETS, processes_matching


def start_harness(store_path, *args):
    env = os.environ | {"MSGBENCH_TARGETS_DIR": str(FIXTURE_TARGETS), "MSGBENCH_STORE": str(store_path)}
    return subprocess.Popen(
        [sys.executable, "-m", "msgbench", "run", "ring", "--target", "fake", "--no-build", *args],
        cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for(condition, timeout=20.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def measured(store_path) -> int:
    if not store_path.exists():
        return 0
    store = Store(store_path)
    try:
        runs = store.runs()
        return runs[0]["measured"] if runs else 0
    finally:
        store.close()


def test_ctrl_c_keeps_what_was_measured_and_kills_the_worker(tmp_path):
    store_path = tmp_path / "store.sqlite"
    harness = start_harness(store_path, "--variant", "ok,hang", "-p", "n=10", "--repeat", "3",
                            "--warmup", "0", "--timeout", "120")
    try:
        assert wait_for(lambda: measured(store_path) >= 1), "the first measurement never landed"
        assert wait_for(lambda: processes_matching("sleep 31337")), "the hanging worker never started"
        harness.send_signal(signal.SIGINT)
        _, err = harness.communicate(timeout=30)
    finally:
        harness.kill()
    assert harness.returncode == 130
    assert "interrupted" in err
    store = Store(store_path)
    run = store.runs()[0]
    assert run["status"] == "interrupted"
    statuses = [m["status"] for m in store.measurements(run["id"])]
    assert statuses == ["ok", "interrupted"]
    assert not processes_matching("sleep 31337")
    assert not processes_matching("worker.py")


def test_sigterm_is_handled_like_ctrl_c(tmp_path):
    store_path = tmp_path / "store.sqlite"
    harness = start_harness(store_path, "--variant", "slow", "-p", "n=10", "--repeat", "50", "--warmup", "0")
    try:
        assert wait_for(lambda: measured(store_path) >= 2)
        harness.send_signal(signal.SIGTERM)
        harness.communicate(timeout=30)
    finally:
        harness.kill()
    assert harness.returncode == 130
    run = Store(store_path).runs()[0]
    assert run["status"] == "interrupted" and run["measured"] >= 2
    assert not processes_matching("worker.py")


def test_a_hold_outside_a_run_defers_ctrl_c_and_gives_pythons_handler_back():
    """msgbench build and the tests start children with Python's own SIGINT handler in
    place: a hold() there defers the interrupt too, and release() raises it."""
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    interrupts.hold()
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(0.01)  # the handler has run: nothing was raised while held
    with pytest.raises(KeyboardInterrupt):
        interrupts.release()
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    assert not interrupts.pending()


def test_a_hold_in_another_thread_leaves_ctrl_c_to_the_main_thread():
    """Only the main thread takes an interrupt: a build's thread holding must not defer it."""
    held = threading.Thread(target=interrupts.hold)
    held.start()
    held.join()
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
