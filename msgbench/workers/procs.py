"""Process supervision: nothing a worker starts outlives it, or the harness.

Every worker runs under a small supervisor, this file run as a script (stdlib only,
`python -I -S`, about 20 ms to start, outside the worker's timed section):

- it is a child subreaper (PR_SET_CHILD_SUBREAPER), so every descendant of the
  worker, even one that called setsid() or double-forked like a daemon, is
  reparented to it rather than to init, and stays findable;
- it has PR_SET_PDEATHSIG, so a harness killed with SIGKILL still tells it to stop;
- when the worker exits it SIGKILLs whatever the worker left behind; when it is
  told to stop (SIGTERM/SIGINT/SIGHUP, or its parent's death) it TERMs every
  descendant, waits a grace, and KILLs the rest;
- the worker inherits stdin, stdout and stderr unchanged, and the worker's own
  wait status and resource usage come back on a separate pipe (--status-fd), so
  the harness reports the worker's max RSS, not the supervisor's.

The harness side also lives here: who is running a run (harness_identity) and
whether that harness is still alive (harness_alive), for runs left `running`.
"""

import contextlib
import json
import os
import signal
import socket
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
POLL_S = 0.01


# ---------------------------------------------------------------- harness side


def supervised_argv(argv: list[str], status_fd: int, grace_s: float, cpus: str | None = None,
                    cpuset: str | None = None) -> list[str]:
    """The command that runs argv under the supervisor (give it pass_fds=(status_fd,)).
    cpus: the CPUs (a kernel CPU list, '1' or '2-7') the worker and all it starts run on;
    cpuset: the cpuset folder to enter first (msgbench/workers/shield.py: the shielded CPUs)."""
    placed = (["--cpuset", cpuset] if cpuset else []) + (["--cpus", cpus] if cpus else [])
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), "--status-fd", str(status_fd),
            "--parent", str(os.getpid()), "--grace", f"{grace_s:g}", *placed, "--", *argv]


def read_status(fd: int) -> dict:
    """What the supervisor reported about its worker; {} if it said nothing (it was killed)."""
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        return {}


def start_time(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (/proc/PID/stat field 22)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, IndexError, ValueError):
        return None


def boot_id() -> str:
    try:
        with open("/proc/sys/kernel/random/boot_id") as f:
            return f.read().strip()
    except OSError:
        return ""


def harness_identity() -> dict:
    """Who runs this run: enough to tell later whether that process still exists
    (a pid alone is reused; pid + start time + boot id is not)."""
    pid = os.getpid()
    return {"pid": pid, "start_time": start_time(pid), "boot_id": boot_id(), "host": socket.gethostname()}


def harness_alive(identity: dict) -> bool:
    """Whether the harness a run recorded may still be running. A run from another
    host cannot be judged from here, so it counts as alive."""
    if identity.get("host") != socket.gethostname():
        return True
    if identity.get("boot_id") != boot_id():
        return False
    pid = identity.get("pid")
    return isinstance(pid, int) and start_time(pid) is not None and start_time(pid) == identity.get("start_time")


def process_stats():
    """(pid, the /proc/PID/stat fields after the command name) of every process, in one
    pass over /proc: fields[0] is the state, [1] the parent, [3] the session, [11:15]
    utime stime cutime cstime. A process that ends meanwhile is skipped."""
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat") as f:
                yield int(entry.name), f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue


def descendants(root: int) -> list[int]:
    """Live (not zombie) processes below root, from one pass over /proc."""
    children: dict[int, list[int]] = {}
    for pid, fields in process_stats():
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(pid)
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


# ---------------------------------------------------------------- the supervisor


class _Stop(Exception):
    """Raised (once) by a stop signal while the supervisor waits for its worker."""


class _Supervisor:
    def __init__(self, grace_s: float):
        self.grace_s = grace_s
        self.may_raise = True  # a stop signal interrupts the wait only while we wait
        self.hurry = False  # a second stop signal: KILL at once
        self.worker: int | None = None
        self.status: int | None = None
        self.rusage = None
        self.worker_cpus: list[int] | None = None

    def on_signal(self, signum, frame) -> None:
        if self.may_raise:
            self.may_raise = False
            raise _Stop
        self.hurry = True

    def reap(self, block: bool) -> bool:
        """Reap one child (the worker's status and rusage are kept); False if none was ready."""
        try:
            pid, status, rusage = os.wait4(-1, 0 if block else os.WNOHANG)
        except ChildProcessError:
            return False
        if pid and pid == self.worker:
            self.status, self.rusage = status, rusage
        return bool(pid)

    def run(self, argv: list[str]) -> dict:
        try:
            self.worker = os.posix_spawnp(argv[0], argv, os.environ,
                                          setsigdef=(signal.SIGPIPE, signal.SIGXFSZ))
            with contextlib.suppress(OSError):  # the placement it really got, read back from the kernel
                self.worker_cpus = sorted(os.sched_getaffinity(self.worker))
            _detach_stdio()  # from now on only the worker holds the harness's pipes
            while self.status is None:
                self.reap(block=True)
            self.may_raise = False
            stopped = False
        except _Stop:
            stopped = True
        except OSError as exc:
            self.may_raise = False
            return {"error": f"cannot start worker {argv[0]!r}: {exc.strerror or exc}"}
        self.end_all(self.grace_s if stopped else 0.0)
        report = {"stopped": stopped}
        if self.worker_cpus is not None:
            report["worker_cpus"] = self.worker_cpus
        if self.status is not None:
            report["exit_code"] = os.waitstatus_to_exitcode(self.status)
            report["max_rss_bytes"] = self.rusage.ru_maxrss * 1024
            report["cpu_s"] = self.rusage.ru_utime + self.rusage.ru_stime
        return report

    def end_all(self, grace_s: float) -> None:
        """TERM every descendant, KILL what is left after grace_s, reap them all."""
        deadline = time.monotonic() + grace_s
        signalled: set[int] = set()
        while True:
            while self.reap(block=False):
                pass
            pids = descendants(os.getpid())
            if not pids:
                return
            kill = self.hurry or time.monotonic() >= deadline
            for pid in pids:
                if kill or pid not in signalled:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL if kill else signal.SIGTERM)
                    signalled.add(pid)
            time.sleep(POLL_S)


def _detach_stdio() -> None:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)


def _prctl(option: int, value: int) -> None:
    import ctypes  # only here: the harness side never needs it

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _cpu_set(text: str) -> set[int]:
    """'1' or '2-4,6' (msgbench.workers.cpus.cpu_list's form; the supervisor imports nothing of msgbench)."""
    cpus = set()
    for part in text.split(","):
        first, _, last = part.partition("-")
        cpus.update(range(int(first), int(last or first) + 1))
    return cpus


def main(args: list[str]) -> int:
    split = args.index("--")
    options, argv = dict(zip(args[:split:2], args[1:split:2], strict=True)), args[split + 1:]
    status_fd, parent = int(options["--status-fd"]), int(options["--parent"])
    os.set_inheritable(status_fd, False)  # the worker must not hold the status pipe open
    supervisor = _Supervisor(float(options["--grace"]))
    for sig in STOP_SIGNALS:
        signal.signal(sig, supervisor.on_signal)
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the harness died before PR_SET_PDEATHSIG took hold
        return 1
    if "--cpuset" in options:  # a shield's CPUs are outside the harness's cpuset: enter it first
        with open(os.path.join(options["--cpuset"], "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    if "--cpus" in options:  # before the worker exists: its threads and children inherit it
        os.sched_setaffinity(0, _cpu_set(options["--cpus"]))
    report = supervisor.run(argv)
    with contextlib.suppress(OSError):  # the harness is gone: nobody is left to tell
        os.write(status_fd, json.dumps(report).encode())
    return report.get("exit_code", 1)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]) & 0xFF)
