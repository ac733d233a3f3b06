"""Capacity: the highest load a system holds under a latency bound (the pure logic).

No processes here: the bound (`Slo`), the judgement of one load's measurements
(`judge`), the search over loads (`Search`: a doubling ramp, then bisection, then the
top confirmed by repeated runs), and the latency-throughput curve with its knee
(`curve`, `knee`). msgbench/running/capacity_run.py wires them to the runner; the rules and
why they are what they are: docs/decisions.md, "Capacity".
"""

import itertools
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from msgbench.core import histogram

# A step holds its load when the system delivered at least this share of it (the rest is
# a backlog growing, whose latencies would measure the queue, not the system).
ACHIEVED_SHARE = 0.99
DEFAULT_PRECISION = 0.02  # bisection stops when the bracket is this narrow, relative to its bottom
DEFAULT_CONFIRM = 3  # runs at the top load, all of which must hold (their histograms merged)
MAX_HALVINGS = 6  # below the start: how far the search goes down before it says "never"
DEFAULT_MAX_STEPS = 40
CURVE_PERCENTILES = (50.0, 90.0, 99.0, 99.9)

_UNITS_NS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}


class SloError(ValueError):
    """A bound that cannot be read; the message names the value and what is accepted."""


@dataclass(frozen=True)
class Slo:
    """What a load must meet to be held."""

    percentile: float  # 0 < q <= 100: the latency percentile bounded (99 for p99)
    bound_ns: float  # ... at most this, ns
    loss: float | None = None  # the largest loss ratio any variant may show; None: only lossless ones bound (0)
    achieved_share: float = ACHIEVED_SHARE

    @property
    def name(self) -> str:
        return percentile_name(self.percentile)

    def describe(self) -> str:
        text = f"{self.name} <= {format_ns(self.bound_ns)}"
        if self.loss is not None:
            text += f", loss <= {self.loss * 100:g}%"
        return text + f", achieved >= {self.achieved_share * 100:g}% of offered"

    def as_dict(self) -> dict:
        return {"percentile": self.percentile, "bound_ns": self.bound_ns, "loss": self.loss,
                "achieved_share": self.achieved_share}

    @classmethod
    def from_dict(cls, raw: dict) -> "Slo":
        return cls(float(raw["percentile"]), float(raw["bound_ns"]), raw.get("loss"),
                   float(raw.get("achieved_share", ACHIEVED_SHARE)))


def percentile_name(q: float) -> str:
    """p99, p99.9, p50: as people write them."""
    return f"p{q:g}"


def format_ns(ns: float) -> str:
    """A latency in the unit that reads best: 850 us, 5 ms, 1.2 s."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3g} {unit}"
    return f"{ns:.3g} ns"


def parse_slo(texts: list[str]) -> Slo:
    """--slo items, each `pQ=TIME` (p99=5ms, p99.9=20ms, p50=500us) or `loss=RATIO`
    (loss=0, loss=0.1%); one percentile bound, at most one loss bound."""
    percentile = bound = loss = None
    items = [item.strip() for text in texts for item in text.split(",") if item.strip()]
    if not items:
        raise SloError("--slo is empty: give a percentile's bound, e.g. --slo p99=5ms")
    for item in items:
        name, sep, value = item.partition("=")
        name, value = name.strip().lower(), value.strip()
        if not sep or not value:
            raise SloError(f"--slo {item!r}: expected NAME=VALUE, e.g. p99=5ms or loss=0")
        if name == "loss":
            if loss is not None:
                raise SloError(f"--slo {item!r}: the loss bound is given twice")
            loss = _ratio(value, item)
            continue
        match = re.fullmatch(r"p(\d+(?:\.\d+)?)", name)
        if not match or not 0 < float(match.group(1)) <= 100:
            raise SloError(f"--slo {item!r}: {name!r} is no bound; accepted: pQ with 0 < Q <= 100 "
                           "(p50, p99, p99.9) or loss")
        if percentile is not None:
            raise SloError(f"--slo {item!r}: a second percentile bound; a capacity is judged by one")
        percentile, bound = float(match.group(1)), _duration_ns(value, item)
    if percentile is None:
        raise SloError("--slo names no percentile: give one, e.g. --slo p99=5ms (loss alone bounds no latency)")
    return Slo(percentile, bound, loss)


def _duration_ns(text: str, item: str) -> float:
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)", text)
    if not match or float(match.group(1)) <= 0:
        raise SloError(f"--slo {item!r}: {text!r} is no latency bound; give a positive time with its unit: "
                       "ns, us, ms or s (e.g. 5ms)")
    return float(match.group(1)) * _UNITS_NS[match.group(2)]


def _ratio(text: str, item: str) -> float:
    percent = text.endswith("%")
    try:
        value = float(text.removesuffix("%")) / (100 if percent else 1)
    except ValueError:
        value = -1.0
    if not 0 <= value < 1:
        raise SloError(f"--slo {item!r}: {text!r} is no loss bound; give a ratio from 0 up to (not including) 1, "
                       "or a percentage (0.1%)")
    return value


# ---------------------------------------------------------------- one load's verdict


@dataclass
class Observation:
    """One measurement at a load, as the judgement needs it."""

    offered: float  # the load asked for, in the axis's unit (msg/s, users)
    status: str  # the measurement's status: ok, failed, timeout, ...
    achieved: float | None = None  # the load delivered, same unit
    latency: dict[int, int] = field(default_factory=dict)  # the latency histogram, {bucket: count}
    latency_max_ns: float | None = None
    loss_ratio: float = 0.0
    error: str | None = None


@dataclass(frozen=True)
class Verdict:
    held: bool
    why: str  # what decided it, in a line
    value_ns: float | None = None  # the bounded percentile over every run at the load, merged


def merged(observations: list[Observation]) -> tuple[dict[int, int], float | None]:
    """The runs' histograms added bucket by bucket (never percentiles averaged) and their
    largest maximum."""
    buckets: dict[int, int] = {}
    for o in observations:
        for bucket, count in o.latency.items():
            buckets[bucket] = buckets.get(bucket, 0) + count
    maxima = [o.latency_max_ns for o in observations if o.latency_max_ns is not None]
    return buckets, (max(maxima) if maxima else None)


def percentile_ns(buckets: dict[int, int], q: float, maximum: float | None) -> float | None:
    """The percentile of a histogram, never above its measured maximum; None when empty."""
    if not histogram.total(buckets):
        return None
    return histogram.percentile(buckets, q, maximum)


def judge(slo: Slo, observations: list[Observation]) -> Verdict:
    """Whether every run at one load held it: each ok, each delivering >= the achieved
    share of the offered load, each within the loss bound, and the bounded percentile of
    their merged histogram at most the bound."""
    if not observations:
        raise ValueError("judge: no observations")
    for o in observations:
        if o.status != "ok":
            return Verdict(False, f"{o.status}: {o.error or 'no result'}")
        if o.achieved is None or o.achieved < slo.achieved_share * o.offered:
            got = "nothing" if o.achieved is None else f"{o.achieved:,.0f}"
            return Verdict(False, f"achieved {got} of {o.offered:,.0f} offered "
                                  f"(< {slo.achieved_share * 100:g}%)")
        if slo.loss is not None and o.loss_ratio > slo.loss:
            return Verdict(False, f"loss {o.loss_ratio * 100:.3g}% > {slo.loss * 100:g}%")
    buckets, maximum = merged(observations)
    value = percentile_ns(buckets, slo.percentile, maximum)
    if value is None:
        return Verdict(False, "no latency was measured")
    runs = f" over {len(observations)} runs" if len(observations) > 1 else ""
    if value > slo.bound_ns:
        return Verdict(False, f"{slo.name} {format_ns(value)} > {format_ns(slo.bound_ns)}{runs}", value)
    return Verdict(True, f"{slo.name} {format_ns(value)} <= {format_ns(slo.bound_ns)}{runs}", value)


# ---------------------------------------------------------------- the search

FOUND = "found"  # the highest load held, to within the precision, confirmed
NEVER = "never"  # not even the lowest load tried held
MACHINE_LIMIT = "machine limit"  # held at the largest load the machine can run: the capacity is at least that
STEP_LIMIT = "step limit"  # the search ran out of steps before it converged
UNSUPPORTED = "unsupported"  # the system cannot run the workload at all
FAILED = "failed"  # no step measured anything: every measurement failed (the error is the answer)


@dataclass(frozen=True)
class Probe:
    load: float
    confirming: bool  # a repeated run at the top, not a new load


@dataclass
class Search:
    """One system's search for its capacity, fed one verdict at a time.

    Ramp: from `start`, double while each load holds (never past `limit`, the machine's
    largest). The first that fails brackets the capacity with the last that held; if
    the first load fails, halve instead (at most MAX_HALVINGS times) to find one that
    holds. Bisect the bracket until it is within `precision` of its bottom (or
    `quantize` can split it no more). Confirm: run the bottom again until `confirm`
    runs there, all of which must hold together (`judge` over them, histograms merged);
    a top that fails its confirmation becomes the bracket's new failed end, and the
    search goes on below it.
    """

    start: float
    precision: float = DEFAULT_PRECISION
    limit: float | None = None
    confirm: int = DEFAULT_CONFIRM
    max_steps: int = DEFAULT_MAX_STEPS
    quantize: Callable[[float], float] = lambda load: load
    limit_why: str = ""  # why the machine stops at `limit` (its file descriptors, ...)
    held: dict = field(default_factory=dict)  # load -> the latest verdict at it (bool)
    runs: dict = field(default_factory=dict)  # load -> runs made at it
    steps: int = 0
    status: str | None = None  # FOUND, NEVER, MACHINE_LIMIT, STEP_LIMIT, UNSUPPORTED once done
    why: str = ""
    _phase: str = "ramp"
    _next: float | None = None

    def __post_init__(self):
        if self.start <= 0:
            raise ValueError(f"start {self.start!r}: a load must be positive")
        if not 0 < self.precision < 1:
            raise ValueError(f"precision {self.precision!r}: expected a fraction between 0 and 1")
        if self.confirm < 1:
            raise ValueError(f"confirm {self.confirm!r}: at least 1 run at the top")
        self._next = self.quantize(min(self.start, self.limit) if self.limit else self.start)

    @property
    def done(self) -> bool:
        return self.status is not None

    @property
    def capacity(self) -> float | None:
        """The highest load held (and confirmed), or None."""
        return self._lo() if self.status in (FOUND, MACHINE_LIMIT, STEP_LIMIT) else None

    def next(self) -> Probe | None:
        if self.done:
            return None
        if self.steps >= self.max_steps:
            self._finish(STEP_LIMIT, f"no answer within {self.max_steps} steps")
            return None
        return Probe(self._next, self._phase == "confirm")

    def stop(self, status: str, why: str) -> None:
        """End the search from outside (a system that cannot run the workload)."""
        self._finish(status, why)

    def record(self, load: float, held: bool) -> None:
        """The verdict at the load next() proposed (for a confirming run: over every run there)."""
        if self.done or load != self._next:
            raise ValueError(f"record({load!r}): the search proposed {self._next!r}")
        self.steps += 1
        self.runs[load] = self.runs.get(load, 0) + 1
        self.held[load] = held
        if self._phase == "ramp":
            self._ramp(load, held)
        elif self._phase == "descend":
            self._descend(load, held)
        elif self._phase == "bisect":
            self._bisect()
        else:
            self._confirmed(load, held)

    def _lo(self) -> float | None:
        held = [load for load, ok in self.held.items() if ok]
        return max(held) if held else None

    def _hi(self) -> float | None:
        """The lowest load that failed above the highest that held."""
        lo = self._lo()
        failed = [load for load, ok in self.held.items() if not ok and (lo is None or load > lo)]
        return min(failed) if failed else None

    def _ramp(self, load: float, held: bool) -> None:
        if not held:
            if self._lo() is None:
                self._phase = "descend"
                self._descend(load, held)
            else:
                self._bisect()
            return
        if self.limit is not None and load >= self.limit:
            self._to_confirm()
            return
        bigger = self.quantize(load * 2)
        self._next = min(bigger, self.quantize(self.limit)) if self.limit is not None else bigger

    def _descend(self, load: float, held: bool) -> None:
        if held:
            self._bisect()
            return
        lower = self.quantize(load / 2)
        if lower < self.start / 2 ** MAX_HALVINGS or lower <= 0 or lower >= load:
            self._finish(NEVER, f"no load held, down to {load:,.6g}")
            return
        self._next = lower

    def _bisect(self) -> None:
        lo, hi = self._lo(), self._hi()
        if lo is None:  # a confirmation failed at the only load that had held: go lower
            self._phase = "descend"
            self._descend(min(self.held), False)
            return
        if hi is None:
            self._to_confirm()
            return
        middle = self.quantize((lo + hi) / 2)
        if hi - lo <= self.precision * lo or middle in (lo, hi) or not lo < middle < hi:
            self._to_confirm()
            return
        self._phase, self._next = "bisect", middle

    def _to_confirm(self) -> None:
        lo = self._lo()
        if self.runs.get(lo, 0) >= self.confirm:
            self._finish_held(lo)
            return
        self._phase, self._next = "confirm", lo

    def _confirmed(self, load: float, held: bool) -> None:
        if held:
            self._to_confirm()
            return
        self._bisect()  # the top failed with more runs: it is the bracket's failed end now

    def _finish_held(self, lo: float) -> None:
        at_limit = self.limit is not None and lo >= self.quantize(self.limit)
        if at_limit:
            self._finish(MACHINE_LIMIT, f"held at the machine's limit {lo:,.6g}" +
                         (f" ({self.limit_why})" if self.limit_why else "") + ": the capacity is at least that")
            return
        hi = self._hi()
        self._finish(FOUND, f"held {lo:,.6g} in {self.runs[lo]} runs" +
                     (f"; {hi:,.6g} did not" if hi is not None else ""))

    def _finish(self, status: str, why: str) -> None:
        self.status, self.why, self._next = status, why, None


# ---------------------------------------------------------------- the curve


@dataclass
class CurvePoint:
    offered: float
    achieved: float | None  # the median over the runs at the load
    runs: int
    percentiles_ns: dict  # {50.0: ns, 90.0: ..., 99.0: ..., 99.9: ...} of the merged histogram
    max_ns: float | None
    held: bool
    why: str


def curve(slo: Slo, by_load: dict[float, list[Observation]]) -> list[CurvePoint]:
    """The latency-throughput curve of one system: a point per offered load, each from
    the histograms of every run there merged, in order of load."""
    found = []
    for load in sorted(by_load):
        runs = by_load[load]
        good = [o for o in runs if o.status == "ok"]
        buckets, maximum = merged(good)
        achieved = sorted(o.achieved for o in good if o.achieved is not None)
        verdict = judge(slo, runs)
        found.append(CurvePoint(
            offered=load, achieved=achieved[len(achieved) // 2] if achieved else None, runs=len(runs),
            percentiles_ns={q: percentile_ns(buckets, q, maximum) for q in CURVE_PERCENTILES},
            max_ns=maximum, held=verdict.held, why=verdict.why))
    return found


def knee(points: list[CurvePoint], percentile: float = 99.0) -> CurvePoint | None:
    """Where latency turns up: the point before the steepest rise of the percentile from
    one load to the next (in log terms, so 1 ms -> 3 ms counts as much as 10 -> 30 ms),
    when that rise at least doubles it; None on a curve with no such rise."""
    usable = [p for p in points if p.percentiles_ns.get(percentile)]
    best, steepest = None, math.log(2)
    for before, after in itertools.pairwise(usable):
        rise = math.log(after.percentiles_ns[percentile] / before.percentiles_ns[percentile])
        if rise >= steepest:
            best, steepest = before, rise
    return best


def spectrum(buckets: dict[int, int], maximum: float | None) -> list[tuple[float, float]]:
    """The percentile spectrum (HdrHistogram's): (percentile, ns) at 0, 50, 75, 87.5, ...
    halving the distance to 100 each time, to the last that the count resolves, then the
    maximum."""
    n = histogram.total(buckets)
    if not n:
        return []
    found, q, k = [], 0.0, 0
    while True:
        found.append((q, histogram.percentile(buckets, q, maximum)))
        k += 1
        q = 100 * (1 - 0.5 ** k)
        if 0.5 ** k * n < 1:  # beyond here every percentile is the largest value
            break
    found.append((100.0, maximum if maximum is not None else histogram.percentile(buckets, 100)))
    return found
