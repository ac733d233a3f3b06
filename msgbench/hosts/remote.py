"""The remote end of every process msgbench starts on another host (stdlib only).

msgbench copies this file to the host (~/.cache/msgbench/remote-<hash>.py) and ssh runs it
there with `python3 -I -S`: nothing of msgbench's has to be installed there but the built
targets and a Python 3. It starts the command in a
session of its own, with ssh's stdin, stdout and stderr passed straight through (no
copying), and:

- ends the command's whole session when the ssh session is gone. sshd does not signal
  a command that has no terminal when its channel closes (and with connection
  multiplexing its own process lives on), but it closes the pipes: the read end of our
  stdout then reports POLLERR/POLLHUP, which is watched here;
- reports how the command ended, with its CPU time and peak RSS from the kernel's
  accounting of the reaped children, as the last line on stderr
  (`msgbench-remote {...}`), which the harness takes in place of what it could measure
  of the ssh client;
- removes a temporary directory the harness made for the command (a broker's) when
  it ends.
"""

import contextlib
import json
import os
import resource
import select
import shutil
import signal
import sys
import time

MARK = "msgbench-remote"
POLL_MS = 100
PR_SET_CHILD_SUBREAPER = 36


def _parse(args: list[str]) -> tuple[dict, list[str]]:
    opts = {"cwd": None, "grace": 5.0, "env": {}, "rmdir": None, "stop_on_eof": False, "nofile": None}
    while args and args[0] != "--":
        if args[0] == "--stop-on-eof":  # a server: stdin is not its, its end stops it
            opts["stop_on_eof"], args = True, args[1:]
            continue
        flag, value, args = args[0], args[1], args[2:]
        if flag == "--env":
            name, _, text = value.partition("=")
            opts["env"][name] = text
        elif flag == "--grace":
            opts["grace"] = float(value)
        else:
            opts[flag.lstrip("-")] = value
    return opts, args[1:]


def _raise_nofile(want: int) -> None:
    """The descriptors the command needs (a chat server's or load generator's one per
    user): the hard limit raised where allowed (root), the soft one as far as it goes."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < want:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (want, want))
            return
    limit = want if hard == resource.RLIM_INFINITY else min(want, hard)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, limit), hard))


def _stdout_gone() -> bool:
    poller = select.poll()
    poller.register(1, 0)  # no events asked: POLLERR and POLLHUP are always reported
    return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))


def _stdin_ended() -> bool:
    poller = select.poll()
    poller.register(0, select.POLLIN)
    if not poller.poll(0):
        return False
    try:
        return os.read(0, 4096) == b""
    except OSError:
        return True


def _end_session(pid: int, grace_s: float) -> None:
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            try:  # a command that left its group: still ours to end
                os.kill(pid, sig)
            except ProcessLookupError:
                return
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except ProcessLookupError:
                return
            _reap_any()
            time.sleep(0.05)


REAPED: dict[int, int] = {}  # pid -> wait status of every child reaped


def _reap_any() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        REAPED[pid] = status


def main(args: list[str]) -> int:
    opts, argv = _parse(args)
    try:
        import ctypes  # a subreaper keeps a daemonising descendant findable (best effort)

        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1)
    except (OSError, AttributeError):
        pass
    started = time.monotonic()
    started_r, started_w = os.pipe()  # closed by the child's exec: its session exists by then
    try:
        pid = os.fork()
    except OSError as exc:
        print(f"{MARK}: cannot fork: {exc}", file=sys.stderr)
        return 127
    if pid == 0:  # the command: its own session, so its whole group can be ended
        try:
            os.close(started_r)
            os.setsid()
            if opts["stop_on_eof"]:
                os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            if opts["cwd"]:
                os.chdir(opts["cwd"])
            if opts["nofile"]:
                _raise_nofile(int(opts["nofile"]))
            os.execvpe(argv[0], argv, os.environ | opts["env"])
        except OSError as exc:
            os.write(2, f"{MARK}: cannot start {argv[0]!r} in {opts['cwd']}: {exc}\n".encode())
        os._exit(127)
    os.close(started_w)
    os.read(started_r, 1)  # EOF at the child's exec (or its exit)
    os.close(started_r)
    if opts["stop_on_eof"]:  # a server: the harness samples its session's CPU by this id
        with contextlib.suppress(OSError):
            print(f"{MARK}-session {pid}", file=sys.stderr, flush=True)
    status, why = None, "exited"
    while status is None:
        done, raw = os.waitpid(pid, os.WNOHANG)
        if done:
            status = raw
            break
        if _stdout_gone() or (opts["stop_on_eof"] and _stdin_ended()):
            why = "its ssh session ended" if not opts["stop_on_eof"] else "stopped"
            _end_session(pid, opts["grace"])
            try:
                status = os.waitpid(pid, 0)[1]
            except ChildProcessError:  # reaped while its session was ended
                status = REAPED.get(pid, -1)
            break
        time.sleep(POLL_MS / 1000)
    _end_session(pid, 0.0)  # whatever the command left in its session
    _reap_any()
    if opts["rmdir"]:
        shutil.rmtree(opts["rmdir"], ignore_errors=True)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = os.waitstatus_to_exitcode(status) if status is not None and status >= 0 else None
    report = {"exit_code": code, "why": why, "cpu_s": round(usage.ru_utime + usage.ru_stime, 6),
              "max_rss_bytes": usage.ru_maxrss * 1024, "wall_s": round(time.monotonic() - started, 6)}
    with contextlib.suppress(OSError):
        print(f"{MARK} {json.dumps(report)}", file=sys.stderr, flush=True)
    if code is None:
        return 255
    return code if code >= 0 else 128 - code


SESSION_CPU = r"""
import os, sys
sid, ticks = sys.argv[1], 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if fields[3] == sid:
        ticks += sum(int(f) for f in fields[11:15])
print(ticks * 1000 / os.sysconf("SC_CLK_TCK"))
"""


def parse_session(text: str) -> int | None:
    """The session id a server's wrapper announced (its log's first lines)."""
    for line in text.splitlines()[:50]:
        if line.startswith(MARK + "-session "):
            return int(line.split()[1])
    return None


def parse_report(stderr: str) -> dict | None:
    """The wrapper's report from the text of its stderr, or None."""
    for line in reversed(stderr.splitlines()):
        if line.startswith(MARK + " {"):
            try:
                return json.loads(line[len(MARK) + 1:])
            except ValueError:
                return None
    return None


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
