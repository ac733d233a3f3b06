"""What machine a run was measured on: stored with every run."""

import os
import platform
import socket
import subprocess
import sys

from msgbench import __version__
from msgbench.paths import REPO_ROOT


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
        return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=10, check=False)
    try:
        head = git("rev-parse", "--short=12", "HEAD")
        if head.returncode != 0:
            return "unknown (not a git checkout)"
        dirty = git("status", "--porcelain", "--untracked-files=no").stdout.strip()
        return head.stdout.strip() + (" (dirty)" if dirty else "")
    except (OSError, subprocess.TimeoutExpired):
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
    }


def first_line_of(argv: list[str], cwd=None) -> str:
    """The first line a version command prints (stdout, else stderr), or why not."""
    try:
        proc = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return lines[0].strip() if lines else "unknown"
