"""One measurement: start a worker, hand it the request, read its JSON lines, clean up.

Each worker runs under a supervisor (msgbench.workers.procs) in a session of its own: a time
limit, a crash, Ctrl-C or even a SIGKILL of the harness takes down the worker and
everything it started, including processes that left its group, and nothing is ever
left running.
"""

import os
import selectors
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from msgbench.core import interrupts, jsonio, spec
from msgbench.core.spill import JsonLines
from msgbench.workers import cpus as cpusets
from msgbench.workers import procs, shield
from msgbench.workers.groups import KILL_GRACE_S, stop_group
from msgbench.workers.series import SampleSeries

STDERR_KEEP_BYTES = 16_384
# Samples are taken about once a second outside the measured path: a day's soak is 86,400.
MAX_SAMPLES = 100_000
# The supervisor TERMs the worker's descendants and KILLs them after this; shorter than
# KILL_GRACE_S, so it is done before the harness would KILL the supervisor itself.
SUPERVISOR_GRACE_S = 1.5
# How often a running worker's needs are asked about (run_worker's gone): a dead broker
# is seen within this, at the cost of one poll() of its process.
GONE_CHECK_S = 0.5


@dataclass
class Outcome:
    status: str  # ok | failed | unsupported | error | timeout | interrupted
    error: str | None = None
    metrics: dict = field(default_factory=dict)  # derived by the harness from measured
    verify: dict = field(default_factory=dict)
    measured: dict | None = None  # the raw facts of a thin worker's result
    histograms: dict = field(default_factory=dict)
    # The worker's samples over time, {"t_ms", name: value}: a worker's are on disk until
    # stored (msgbench/workers/series.py); a list where made here otherwise.
    series: list | JsonLines = field(default_factory=list)
    hello: dict | None = None
    wall_s: float = 0.0
    max_rss_bytes: int | None = None
    cpu_s: float | None = None  # the worker's CPU time and its reaped descendants' (rusage)
    other_cpu_share: float | None = None  # what other work on the machine took meanwhile (runner)
    other_work: dict | None = None  # what that other work was, by cause (noise.py)
    exit_code: int | None = None
    stderr_tail: str = ""
    pgid: int | None = None  # the worker's process group, gone once run_worker returns
    host: str | None = None  # the host the worker ran on (placement), None: this machine
    # Each process of a run spread over hosts (the chat server kind's server and load
    # generators: chat_split.py): role, host, cpu_s, max_rss_bytes, exit_code.
    parts: list = field(default_factory=list)
    # Which host ran each role of a placed run (role -> host alias, several comma-separated,
    # or "local"; Peers.placement_of, or a split run's parts).
    placement: dict | None = None
    # The CPU placement asked for and what the kernel said of each process while the
    # worker ran (msgbench/workers/cpus.py): {"cpus": "1", "seen": {"name[pid]": "1"}}.
    cpu_placement: dict | None = None
    calibrated: dict | None = None  # the work it ran, where the calibration raised it (runner.py)
    beside_builds: list | None = None  # the target builds that ran meanwhile (running/beside.py)

    def worker_info(self) -> dict:
        """The worker process, and the raw facts it reported (so metrics can be derived again)."""
        info = {"wall_s": round(self.wall_s, 4), "max_rss_bytes": self.max_rss_bytes, "exit_code": self.exit_code}
        if self.cpu_s is not None:
            info["cpu_s"] = round(self.cpu_s, 4)
        if self.host:
            info["host"] = self.host
        if self.other_cpu_share is not None:
            info["other_cpu_share"] = round(self.other_cpu_share, 3)
            if self.other_work is not None:  # it explains the share: gone with it (a worker on a host)
                info["other_work"] = self.other_work
        if self.measured is not None:
            info["measured"] = self.measured
        if self.histograms:
            info["histograms"] = self.histograms
        if self.parts:
            info["parts"] = self.parts
        if self.placement:
            info["placement"] = self.placement
        if self.cpu_placement:
            info["cpu_placement"] = self.cpu_placement
        if self.beside_builds:
            info["beside_builds"] = self.beside_builds
        if self.calibrated:
            info["calibrated"] = self.calibrated
        return info


class Protocol:
    """Follows the worker's lines and remembers the first breach of the protocol."""

    def __init__(self, target: str, variant: str, on_progress, on_ready=None, on_line=None):
        self.target, self.variant, self.on_progress = target, variant, on_progress
        self.on_ready = on_ready  # a chat load generator across hosts: its barrier (chat_split.py)
        self.on_line = on_line  # called with each message's type once it is taken (placement read-back)
        self.hello = None
        self.final = None  # the result or error message
        self.breach = None
        self.series = SampleSeries()

    def feed(self, raw: bytes) -> None:
        if self.breach:
            return
        text = raw.decode("utf-8", errors="replace").strip()
        if not text:
            return
        try:
            message = jsonio.loads(text)
        except jsonio.JSONError as exc:  # NaN and infinity too: no metric can be derived from them
            self.breach = f"the worker printed a line that is not JSON on stdout ({exc}): {text[:200]!r}"
            return
        problem = spec.message_problem(message)
        if problem:
            self.breach = f"the worker printed a message that breaks the protocol ({problem}): {text[:200]}"
        elif message["type"] == "hello":
            self._hello(message)
        elif self.hello is None:
            self.breach = f"the worker's first line was not hello: {text[:200]}"
        elif self.final is not None:
            self.breach = f"the worker printed {message['type']!r} after its {self.final['type']!r}"
        elif message["type"] == "progress":
            if self.on_progress:
                self.on_progress(message["done"], message["total"])
        elif message["type"] == "sample":
            self._sample(message)
        elif message["type"] == "ready":
            if self.on_ready is None:
                self.breach = "the worker printed a ready line: only a chat load generator across hosts waits so"
            else:
                self.on_ready(message["stage"])
        else:
            self.final = message
        if self.on_line and not self.breach:
            self.on_line(message["type"])

    def _sample(self, message: dict) -> None:
        if len(self.series) >= MAX_SAMPLES:
            self.breach = f"the worker sent more than {MAX_SAMPLES} samples (at most one a second is expected)"
        elif self.series and message["t_ms"] < self.series.last_t_ms:
            self.breach = f"the worker's sample at t_ms={message['t_ms']} is earlier than its previous one"
        else:
            try:
                self.series.append(message["t_ms"], message["values"])
            except OSError as exc:  # its file is on disk (a full /tmp): the run stops in one line
                self.breach = f"cannot keep the worker's samples in {tempfile.gettempdir()}: {exc}"

    def _hello(self, message: dict) -> None:
        if self.hello is not None:
            self.breach = "the worker said hello twice"
        elif message["target"] != self.target:
            self.breach = f"the worker says it is target {message['target']!r}, not {self.target!r}"
        elif message["variant"] != self.variant:
            self.breach = f"the worker runs variant {message['variant']!r}, not {self.variant!r}"
        else:
            self.hello = message


def run_worker(
    argv: list[str],
    *,
    cwd,
    env: dict,
    request: dict,
    target: str,
    time_limit_s: float,
    on_progress: Callable[[float, float], None] | None = None,
    cpus: frozenset[int] | None = None,
    gone: Callable[[], str | None] | None = None,
) -> Outcome:
    """cpus: the CPUs the worker and everything it starts are placed on (None: anywhere).
    gone: what the worker needs and has lost, if it has (its broker died): asked about
    twice a second, and the worker is stopped at once and the measurement failed with
    that reason, not left to wait out its time limit (a Kafka client retries a dead
    broker for minutes)."""
    problem = spec.request_problem(request)
    if problem:
        raise ValueError(f"refusing to send an invalid request: {problem}")
    started = time.monotonic()
    seen: dict[str, str] = {}
    proc = None

    def read_back(kind: str) -> None:
        # At hello (the worker is up) and at its result (its peer and helpers still are):
        # the CPUs the kernel lets each of them use, not the ones asked for.
        if kind in ("hello", "result") and proc is not None:
            seen.update(cpusets.session_placement(proc.pid))

    protocol = Protocol(target, request["variant"], on_progress, on_line=read_back)
    stderr = bytearray()
    timed_out = False
    status_read, status_write = os.pipe()
    interrupts.hold()
    try:
        proc = subprocess.Popen(
            procs.supervised_argv(argv, status_write, SUPERVISOR_GRACE_S,
                                  cpusets.cpu_list(cpus) if cpus else None, shield.path_for(cpus)),
            cwd=cwd, env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True, pass_fds=(status_write,),
        )
    except OSError as exc:
        interrupts.release()
        os.close(status_read)
        return Outcome(status="error", error=f"cannot start worker {argv[0]!r}: {exc}")
    finally:
        os.close(status_write)
    try:
        interrupts.release()
        _send_request(proc, request)
        ended = _pump(proc, protocol, stderr, started + time_limit_s, gone)
        timed_out = ended == "timeout"
    except BaseException:
        with interrupts.deferred():  # a second Ctrl-C must not cut the clean-up short
            stop_group(proc)
            _reap(proc)
            os.close(status_read)
        raise
    if ended != "ended" or protocol.breach:
        stop_group(proc)
    _reap(proc)
    stop_group(proc, grace_s=0)  # the supervisor ended its worker's descendants; this is its group
    with os.fdopen(status_read, "rb", buffering=0) as status_pipe:
        report = procs.read_status(status_pipe.fileno())
    if report.get("error"):
        return Outcome(status="error", error=report["error"], wall_s=time.monotonic() - started)
    outcome = Outcome(
        status="error", hello=protocol.hello, wall_s=time.monotonic() - started,
        max_rss_bytes=report.get("max_rss_bytes"), cpu_s=report.get("cpu_s"), exit_code=report.get("exit_code"),
        stderr_tail=stderr[-STDERR_KEEP_BYTES:].decode("utf-8", errors="replace"), pgid=proc.pid,
    )
    if report.get("worker_cpus") is not None:  # the supervisor's read-back as it started the worker
        seen["worker at its start"] = cpusets.cpu_list(report["worker_cpus"])
    outcome.cpu_placement = {"cpus": cpusets.cpu_list(cpus) if cpus else "any", "seen": seen}
    judge(outcome, protocol, timed_out, time_limit_s)
    if ended != "ended" and ended != "timeout":  # what it needed was gone: that is the failure
        outcome.status, outcome.error = "failed", ended
    escaped = cpusets.escaped(seen, cpus)
    if escaped and outcome.status == "ok":  # its figures are not of the placement the run claims
        outcome.status = "error"
        outcome.error = (f"placement not held: asked CPUs {cpusets.cpu_list(cpus)}, but the kernel let "
                         + ", ".join(escaped))
    return outcome


def _send_request(proc: subprocess.Popen, request: dict) -> None:
    try:
        proc.stdin.write((jsonio.dumps(request) + "\n").encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the worker died at once; its exit status tells the story


def _pump(proc, protocol: Protocol, stderr: bytearray, deadline: float,
          gone: Callable[[], str | None] | None = None) -> str:
    """Read stdout and stderr until both close: "ended"; "timeout" if the deadline passed
    first; or what gone() said, as soon as it says something."""
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "out")
    selector.register(proc.stderr, selectors.EVENT_READ, "err")
    pending = b""
    asked = time.monotonic()
    try:
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if gone is not None and now - asked >= GONE_CHECK_S:
                asked = now
                lost = gone()
                if lost:
                    return lost
            for key, _ in selector.select(timeout=min(deadline - now, GONE_CHECK_S)):
                chunk = os.read(key.fileobj.fileno(), 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                elif key.data == "err":
                    stderr += chunk
                    del stderr[:-STDERR_KEEP_BYTES]
                else:
                    pending += chunk
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        protocol.feed(line)
                    if protocol.breach:
                        return "ended"
        if pending:
            protocol.feed(pending)
        return "ended"
    finally:
        selector.close()


def judge(outcome: Outcome, protocol: Protocol, timed_out: bool, limit: float) -> None:
    """The outcome's status and error from how the worker ended and what it said (a
    worker run here, or a part of a split run, msgbench/hosts/chat_split.py)."""
    final = protocol.final
    tail = outcome.stderr_tail.strip().splitlines()[-3:]
    said = f" (stderr: {' | '.join(tail)})" if tail else ""
    if timed_out:
        outcome.status = "timeout"
        outcome.error = f"the worker was still running at its time limit of {limit:g} s and was killed"
    elif protocol.breach:
        outcome.error = protocol.breach
    elif protocol.hello is None:
        outcome.error = f"the worker exited (code {outcome.exit_code}) without saying hello{said}"
    elif final is None:
        outcome.error = f"the worker exited (code {outcome.exit_code}) without a result{said}"
    elif final["type"] == "error":
        kind = final["kind"]
        outcome.status = "unsupported" if kind == "unsupported" else "error"
        outcome.error = final["message"] if outcome.status != "error" else f"{kind}: {final['message']}"
    elif outcome.exit_code != 0:
        outcome.error = f"the worker reported a result but exited with code {outcome.exit_code}{said}"
    else:
        outcome.status = "ok"
        outcome.verify = final["verify"]
        outcome.measured, outcome.histograms = final["measured"], final.get("histograms", {})
        outcome.series = protocol.series.lines


def _reap(proc: subprocess.Popen) -> None:
    """Wait for the supervisor, which ends once its worker and every descendant have."""
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()
    try:
        proc.wait(timeout=KILL_GRACE_S + SUPERVISOR_GRACE_S)
    except subprocess.TimeoutExpired:  # it should never need this: the group's KILL is the backstop
        stop_group(proc, grace_s=0)
        proc.wait()
