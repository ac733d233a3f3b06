"""What machine a run was measured on: stored with every run."""

import contextlib
import os
import platform
import shlex
import signal
import socket
import subprocess
import sys
from pathlib import Path

from msgbench import __version__
from msgbench.core.paths import REPO_ROOT
from msgbench.workers import procs

COMMAND_TIMEOUT_S = 10.0  # a version query or git: a second normally, more on a loaded machine
STOP_GRACE_S = 1.0


def meminfo() -> dict[str, int]:
    """/proc/meminfo in bytes."""
    found = {}
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                name, _, rest = line.partition(":")
                parts = rest.split()
                if parts:
                    found[name] = int(parts[0]) * (1024 if parts[1:] == ["kB"] else 1)
    except OSError:
        pass
    return found


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def git_revision() -> str:
    def git(*args):
        return run_bounded(["git", *args], cwd=REPO_ROOT)
    try:
        head = git("rev-parse", "--short=12", "HEAD")
        if head.returncode != 0:
            return "unknown (not a git checkout)"
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
        return head.stdout.strip() + (" (dirty)" if dirty else "")
    except (OSError, CommandHung):
        return "unknown"


def collect(runtimes: dict[str, str]) -> dict:
    return {
        "host": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cores": os.cpu_count(),
        "memory_bytes": meminfo().get("MemTotal"),
        "kernel": f"{platform.system()} {platform.release()} {platform.machine()}",
        "os": os_name(),
        "python": platform.python_version(),
        "msgbench_version": __version__,
        "git_revision": git_revision(),
        "runtimes": runtimes,
        "argv": sys.argv,
        "cpu_governor": cpu_governor(),
        "load_average": load_average(),
    }


def cpu_governor() -> str:
    """The CPU frequency governor (performance, powersave, ...): a powersave core times
    differently from one pinned at its top speed. 'not exposed' in most VMs."""
    try:
        return Path("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor").read_text().strip()
    except OSError:
        return "not exposed"


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages when the run started."""
    try:
        return [float(v) for v in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


class CommandHung(RuntimeError):
    """A short command the harness waits on did not finish in time (it was stopped)."""


def run_bounded(argv: list[str], cwd=None, timeout_s: float = COMMAND_TIMEOUT_S,
                env: dict | None = None) -> subprocess.CompletedProcess:
    """Run a short command (a version query, git) and capture its output, with a limit.

    It runs under the process supervisor, so neither its hanging nor a daemon it
    starts can keep the harness waiting on its pipes or leave a process behind.
    """
    status_read, status_write = os.pipe()
    try:
        proc = subprocess.Popen(procs.supervised_argv(list(argv), status_write, STOP_GRACE_S), cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, pass_fds=(status_write,))
    finally:
        os.close(status_write)
    with os.fdopen(status_read, "rb", buffering=0) as status_pipe:
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except BaseException as exc:  # the time limit, or Ctrl-C: stop it and all it started
            _stop_session(proc)
            if isinstance(exc, subprocess.TimeoutExpired):
                raise CommandHung(f"`{shlex.join(argv)}` did not finish within {timeout_s:g} s "
                                  "and was stopped") from None
            raise
        report = procs.read_status(status_pipe.fileno())
    if report.get("error"):
        raise OSError(report["error"])
    return subprocess.CompletedProcess(argv, report.get("exit_code", proc.returncode), out, err)


def _stop_session(proc: subprocess.Popen) -> None:
    """TERM the supervisor's session (it ends every descendant), KILL it if it lingers."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_GRACE_S + 2)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    for stream in (proc.stdout, proc.stderr):
        stream.close()


def machine_busy_s() -> float | None:
    """CPU seconds every core has spent busy since boot (/proc/stat: user, nice, system,
    irq, softirq, steal), or None where there is no /proc/stat."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    ticks = [int(v) for v in fields[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = ticks
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def first_line_of(argv: list[str], cwd=None, env: dict | None = None) -> str:
    """The first line a version command prints (stdout, else stderr), or why not.

    Raises CommandHung if it does not answer in time: a runtime that hangs at its
    version would hang every worker too.
    """
    try:
        proc = run_bounded(argv, cwd=cwd, env=env)
    except OSError as exc:
        return f"unknown ({exc})"
    return first_line(proc.stdout, proc.stderr)


def first_line(stdout: str, stderr: str) -> str:
    """What a version command said: its first line on stdout, else on stderr."""
    lines = (stdout.strip() or stderr.strip()).splitlines()
    return lines[0].strip() if lines else "unknown"
