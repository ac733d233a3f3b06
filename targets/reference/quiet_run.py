"""Running the socket tools to their end with nothing of this worker awake meanwhile.

A round-trip tool on two shared cores is sensitive to whatever else wakes up: a Python loop
reading the sockperf client's VmHWM every 2 ms made its unpinned round trip about 10% faster
than with no loop (docs/measurements/issue-13-socket.md, set H), a help no msgbench worker
gets. So while a tool runs this worker sleeps:

- the tool's peak RSS is wait4's ru_maxrss, taken by GNU time (`time -f %M`), not sampled
  from /proc. Not this worker's own wait4: at exec the kernel records the forking process's
  high-water mark in the child's maxrss, here the Python worker's ~20 MB; through GNU time
  the child inherits GNU time's (~1.5 MB), below any tool's own peak.
- its end is awaited on a pidfd per tool: one wake-up when it exits, or at the time limit.

Each tool runs in a process group of its own (GNU time and the tool), so that killing it
leaves no tool behind; the session, and so the scheduler's autogroup, stays the worker's.
"""

import contextlib
import os
import re
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass

from params import Failure

GNU_TIME = "/usr/bin/time"  # Debian's package time
PEAK_FORMAT = "msgbench-peak-rss-kb=%M"
PEAK = re.compile(r"^msgbench-peak-rss-kb=(\d+)$", re.MULTILINE)


@dataclass(frozen=True)
class ToolRun:
    """One tool's outputs, exit status and peak RSS (bytes)."""

    stdout: str
    stderr: str
    returncode: int
    peak_rss: int


def timed_argv(argv: list[str], peak_fd: int) -> list[str]:
    """argv under GNU time, which writes the tool's maxrss (KiB) to peak_fd when it exits."""
    return [GNU_TIME, "-f", PEAK_FORMAT, "-o", f"/dev/fd/{peak_fd}", *argv]


def peak_bytes(report: str, argv: list[str]) -> int:
    found = PEAK.search(report)
    if not found:
        raise Failure("internal", f"GNU time reported no peak RSS for {argv[0]}: {report.strip()[-200:]!r}")
    return int(found.group(1)) * 1024


class _Running:
    """One tool under GNU time, its outputs in unlinked temporary files."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        # Owned here and closed by close(), which run_all calls on every path.
        self.files = [tempfile.TemporaryFile(mode="w+") for _ in range(3)]  # noqa: SIM115
        self.out, self.err, self.peak = self.files
        self.returncode: int | None = None
        self.proc: subprocess.Popen | None = None
        self.pidfd: int | None = None
        try:
            self.proc = subprocess.Popen(timed_argv(argv, self.peak.fileno()), stdin=subprocess.DEVNULL,
                                         stdout=self.out, stderr=self.err, text=True,
                                         pass_fds=(self.peak.fileno(),), process_group=0)
        except OSError as exc:
            self.close()
            raise Failure("resource", f"cannot start {argv[0]} under {GNU_TIME}: {exc}") from None
        self.pidfd = os.pidfd_open(self.proc.pid)

    def reap(self) -> None:
        self.returncode = self.proc.wait()

    def result(self) -> ToolRun:
        texts = []
        for file in self.files:
            file.seek(0)
            texts.append(file.read())
        stdout, stderr, report = texts
        return ToolRun(stdout, stderr, self.returncode, peak_bytes(report, self.argv))

    def close(self) -> None:
        if self.proc is not None and self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)  # GNU time and the tool: the group is theirs
            self.reap()
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None
        for file in self.files:
            file.close()


def run_all(argvs: list[list[str]], limit_s: float) -> list[ToolRun]:
    """Start every command at once and sleep until all exited (results in argvs' order), or raise
    an internal Failure at limit_s; none outlives this call."""
    running: list[_Running] = []
    try:
        for argv in argvs:
            running.append(_Running(argv))
        deadline = time.monotonic() + limit_s
        waiting = {tool.pidfd: tool for tool in running}
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure("internal", f"{argvs[0][0]} did not finish within {limit_s:.0f} s")
            ready, _, _ = select.select(list(waiting), [], [], left)
            for fd in ready:
                waiting.pop(fd).reap()
        return [tool.result() for tool in running]
    finally:
        for tool in running:
            tool.close()
