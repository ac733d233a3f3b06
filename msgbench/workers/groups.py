"""Process groups: how the harness stops a worker, a peer or a broker and all it started.

Each of them leads a process group of its own (a session); stopping one is a signal to
the whole group, a grace for it to end, then SIGKILL for what is left.
"""

import contextlib
import os
import signal
import subprocess
import time

from msgbench.core import interrupts

KILL_GRACE_S = 2.0
HURRY_S = 0.5  # after a second Ctrl-C: time for the supervisor to KILL and reap what it has


def stop_group(proc: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the process's whole group, then SIGKILL what is left after grace_s.

    A worker's supervisor, at the head of the group, ends the descendants that left
    it within its own, shorter grace. A second Ctrl-C meanwhile hurries the stop: a
    second SIGTERM (the supervisor then KILLs at once) and a short last wait.
    """
    try:
        os.killpg(proc.pid, signal.SIGTERM if grace_s else signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return
    if not grace_s:
        return
    deadline = time.monotonic() + grace_s
    hurried = False
    while time.monotonic() < deadline:
        if proc.poll() is not None and not group_alive(proc.pid):
            return
        if interrupts.pending() and not hurried:
            hurried = True
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            deadline = min(deadline, time.monotonic() + HURRY_S)
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True
