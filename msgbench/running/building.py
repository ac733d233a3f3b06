"""Building every target at once, within the machine's cores, and timing each build.

One after another, a fresh machine's builds took most of `make run`'s first quarter hour,
although much of each is waiting (Maven and cargo reading their caches, the linker, a
compiler on one file). Two builds at a time fill those waits. Each build keeps its output
to itself (a log file per target, its tail shown when it fails: two compilers' output
interleaved is unreadable) and its time, which `msgbench build` prints as a line per
target and a total, and remembers.

A build starts as soon as its toolchain is there (`missing` says what it still lacks):
while an installer is still at work (`installing`), a build whose compiler is not yet
installed waits for it instead of failing, and the builds that can start do. The longest
build (as last timed) starts first, so that the last to finish is not a long one started
late; the quick ones go next, shortest first, so that targets become ready to measure
early (`msgbench run` measures a scenario as soon as its targets are built), then the
others longest first.

`Builder` runs the builds in the background and answers, at any time, which are done and
which still run: `msgbench run` measures beside it. `build_all` is the whole thing in the
foreground (`msgbench build`).
"""

import contextlib
import json
import os
import signal
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from msgbench.workers import procs

# Each target's build time on the project's 2-vCPU VM (results/build-times.json there,
# 2026-11-28, caches warm), for a machine that has not built anything yet.
SHIPPED_TIMES = Path(__file__).with_name("build-times.json")
POLL_S = 1.0  # how often a build waiting for its toolchain looks again while an installer runs


@dataclass
class Built:
    name: str
    seconds: float
    error: str | None = None


def _load(path: Path) -> dict[str, float]:
    try:
        found = json.loads(path.read_text())
        return {k: float(v) for k, v in found.items()} if isinstance(found, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def order(names: list[str], remembered: dict[str, float]) -> list[str]:
    """The longest builds first (as last timed); the ones never timed first of all, in
    their given order, since any of them may be long."""
    return sorted(names, key=lambda n: (n in remembered, -remembered.get(n, 0.0)))


# A build this much shorter than the longest is quick: it makes its target measurable at
# almost no cost to when the last build ends, so the quick ones go first, shortest first.
QUICK_SHARE = 0.1


def start_order(names: list[str], remembered: dict[str, float], jobs: int) -> list[str]:
    """The order builds start in: the ones never timed first (any of them may be long),
    and the `jobs - 1` longest (they set when the last build ends); then the quick ones
    (under a tenth of the longest) shortest first, so that their targets are measured
    early while the long ones still build; then the rest longest first, so that none of
    them starts last and ends alone. With one job, simply the longest first.

    On this 2-core VM (make run, 2026-11-28) the quick ones are the broker clients of the
    first scenario (pubsub); with every other build shortest first, rust, the second
    longest, started last and built alone for 30 s after pubsub's measurements ended;
    with the long ones all first, the broker clients came last, and the runtime scenarios
    waited for a pubsub scenario that began at 1 min 35 s."""
    longest = order(names, remembered)
    if jobs <= 1:
        return longest
    untimed = [n for n in longest if n not in remembered]
    timed = [n for n in longest if n in remembered]
    head, rest = timed[:jobs - 1], timed[jobs - 1:]
    quick_under = QUICK_SHARE * remembered[timed[0]] if timed else 0.0
    quick = sorted((n for n in rest if remembered[n] < quick_under), key=lambda n: remembered[n])
    return untimed + head + quick + [n for n in rest if n not in quick]


class Builder:
    """The named build steps, run in background threads `jobs` at a time, each once its
    toolchain is there. A step raises to fail (its message is kept).

    missing: per step, what it still needs (the tools its build requires); a step with
    nothing missing may start. installing: whether something that may still install
    those tools runs; once it says no, a step still missing something fails with what.
    """

    def __init__(self, steps: dict[str, Callable[[], None]], jobs: int, times_file: Path,
                 say: Callable[[str], None], missing: dict[str, Callable[[], list[str]]] | None = None,
                 installing: Callable[[], bool] = lambda: False, poll_s: float = POLL_S):
        self.steps, self.jobs, self.times_file, self.say = steps, max(1, jobs), times_file, say
        self.missing = missing or {}
        self.installing, self.poll_s = installing, poll_s
        # This machine's last times; on a fresh checkout, the times shipped with msgbench
        # (measured on the project's 2-vCPU VM), so that even the first build starts the
        # longest first and the quick ones next.
        self.timed = _load(times_file)  # this machine's, written back with the new times
        self.remembered = dict(self.timed) or _load(SHIPPED_TIMES)
        self.waiting = start_order(list(steps), self.remembered, self.jobs)
        self.running: dict[str, float] = {}  # name -> time.monotonic() it started
        self.done: dict[str, Built] = {}
        self.finished: list[Built] = []  # in the order they ended
        self._changed = threading.Condition()
        self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="build")
        self._thread: threading.Thread | None = None
        self.began_at: float | None = None  # time.time() at start(), and when the last step ended
        self.ended_at: float | None = None

    def start(self) -> "Builder":
        self.began_at = time.time()
        self._thread = threading.Thread(target=self._schedule, name="builds", daemon=True)
        self._thread.start()
        return self

    def under_way(self) -> list[str]:
        """The builds running now (a measurement taken meanwhile shares the machine with them)."""
        with self._changed:
            return list(self.running)

    def all_done(self) -> bool:
        with self._changed:
            return len(self.done) == len(self.steps)

    def ended(self, names) -> dict[str, Built]:
        """The named steps that have ended, with their results (without waiting)."""
        with self._changed:
            return {n: self.done[n] for n in names if n in self.done}

    def expected_left_s(self) -> float:
        """How long the steps not yet ended should still take, from their last times,
        shared out over the jobs; infinite while one was never timed."""
        now, left = time.monotonic(), 0.0
        with self._changed:
            for name in self.steps:
                if name in self.done:
                    continue
                if name not in self.remembered:
                    return float("inf")
                started = self.running.get(name)
                left += max(0.0, self.remembered[name] - (now - started if started is not None else 0.0))
        return left / self.jobs

    def wait_any(self, timeout: float | None = None) -> None:
        """Block until one more step ends (or the timeout passes)."""
        with self._changed:
            count = len(self.done)
            if count < len(self.steps):
                self._changed.wait_for(lambda: len(self.done) > count, timeout)

    def cancel(self) -> None:
        """Start nothing more (a run that ends early: Ctrl-C); what runs ends as it ends."""
        with self._changed:
            self.steps = {n: step for n, step in self.steps.items() if n not in self.waiting}
            self.waiting.clear()
            self._changed.notify_all()

    def join(self) -> list[Built]:
        """Wait for every step; remember their times; return them in the order they ended."""
        names = list(self.steps)
        with self._changed:
            self._changed.wait_for(lambda: all(n in self.done for n in names))
        if self._thread is not None:
            self._thread.join()
        self._pool.shutdown(wait=True)
        try:
            self.times_file.parent.mkdir(parents=True, exist_ok=True)
            self.times_file.write_text(json.dumps(self.timed, indent=1, sort_keys=True) + "\n")
        except OSError:
            pass  # only an ordering hint for the next build
        return list(self.finished)

    def _schedule(self) -> None:
        with self._changed:
            while self.waiting:
                if len(self.running) < self.jobs:
                    name, why = self._next_ready()
                    if name is not None:
                        self.waiting.remove(name)
                        if why:  # its toolchain will not come: failed without starting
                            self._end(Built(name, 0.0, why))
                        else:
                            self.running[name] = time.monotonic()
                            self._pool.submit(self._run, name)
                        continue
                self._changed.wait(self.poll_s)

    def _next_ready(self) -> tuple[str | None, str | None]:
        """The next step that may start (and None), or one whose tools cannot come any
        more (and why), or (None, None): wait."""
        installing = self.installing()
        for name in self.waiting:
            lacking = self.missing[name]() if name in self.missing else []
            if not lacking:
                return name, None
            if not installing:
                return name, f"{name} cannot build: it needs {', '.join(lacking)}, which is not installed"
        return None, None

    def _run(self, name: str) -> None:
        started = time.monotonic()
        try:
            self.steps[name]()
        except Exception as exc:  # a build's own failure, reported with its output
            result = Built(name, time.monotonic() - started, str(exc))
        else:
            result = Built(name, time.monotonic() - started)
        with self._changed:
            self.running.pop(name, None)
            self._end(result)

    def _end(self, result: Built) -> None:
        """Under the lock: record a step's end and wake whoever waits for it."""
        self.done[result.name] = result
        self.finished.append(result)
        if len(self.done) == len(self.steps):
            self.ended_at = time.time()
        if result.error is None:
            self.timed[result.name] = self.remembered[result.name] = round(result.seconds, 1)
            self.say(f"built {result.name} in {result.seconds:.0f} s")
        else:
            self.say(f"build of {result.name} failed after {result.seconds:.0f} s")
        self._changed.notify_all()


class Yielding:
    """The process groups of builds beside a run, and whether they must yield the CPU now.

    While a measurement runs, every process of every build is at the scheduler's idle
    priority (SCHED_IDLE: it runs only when nothing else wants the CPU and is preempted
    at once when a worker wakes); between measurements (waiting for a build) they are
    normal processes again, so that on a machine with other work the builds are not
    starved. A process a build starts inherits its parent's policy; one forked in the
    instant between a group's listing and its change keeps the other until the next."""

    def __init__(self):
        self.groups: set[int] = set()
        self.idle = False
        self._lock = threading.Lock()

    def add(self, pgid: int) -> None:
        """A build's process group, just started: given the policy of the moment."""
        with self._lock:
            self.groups.add(pgid)
            if self.idle:
                self._apply({pgid}, True)

    def remove(self, pgid: int) -> None:
        with self._lock:
            self.groups.discard(pgid)

    def yield_cpu(self, idle: bool) -> None:
        with self._lock:
            if idle != self.idle:
                self.idle = idle
                self._apply(self.groups, idle)

    def stop(self) -> None:
        """End every build still running (a run that ended early): its whole group."""
        with self._lock:
            for pgid in self.groups:
                with contextlib.suppress(OSError):  # it ended meanwhile
                    os.killpg(pgid, signal.SIGTERM)

    def _apply(self, groups: set[int], idle: bool) -> None:
        if not groups:
            return
        policy = os.SCHED_IDLE if idle else os.SCHED_OTHER
        for pid in _members(groups):
            with contextlib.suppress(OSError):  # it ended meanwhile
                os.sched_setscheduler(pid, policy, os.sched_param(0))


def _members(groups: set[int]) -> list[int]:
    """The pids of the processes in these process groups (/proc/PID/stat's process group)."""
    return [pid for pid, fields in procs.process_stats() if int(fields[2]) in groups]


def build_all(steps: dict[str, Callable[[], None]], jobs: int, times_file: Path,
              say: Callable[[str], None], **kwargs) -> list[Built]:
    """Run each named build step, `jobs` at a time, and wait for them all; returns every
    step's result in the order they finished."""
    return Builder(steps, jobs, times_file, say, **kwargs).start().join()
