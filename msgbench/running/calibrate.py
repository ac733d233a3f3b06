"""Samples sized by time: each point's work scaled so its timed section lasts long enough.

A timed section of a few milliseconds is at the mercy of one scheduler tick, one page
fault or one wake-up of a halted vCPU; one of half a second averages thousands of them.
As pyperf calibrates its loops, the harness sizes each point's work from its warm-up:
the workload's spec names the parameter that is its amount of work (`"work"`: ring's
laps, socket's bytes, fanin's and pubsub's duration) and the raw fact that times it
(`"timed"`); when the warm-up's timed section is shorter than the run's `min_time_s`,
the work is multiplied by the power of two that brings it there. Work is only ever
raised, never cut below what was asked; a swept parameter is never touched (it is the
x axis); the spec's maximum is respected.

The measurement keeps the point it was asked for (its params, so that `compare`,
`history` and `check` match it across runs) and records what it ran in its worker info
(`calibrated`: {param: value}); every metric is derived and every rule verified from what
ran. The metrics that grow with the work (the spec's `"work": {"scales": [...]}`: ring's
passing time, socket's elapsed time, the CPU times) are then stored for the work asked
(what ran times asked / ran), so that every figure of a point is a figure of its params:
a chart of passing time at m = 10 laps shows times for 10 laps, whichever m each target
ran; the raw facts in the worker info stay as measured.
"""

import math

from msgbench.core import spec

# The timed section a point is calibrated to by default: long enough that a tick, a page
# fault or a halted vCPU's wake-up is a small share of it, short enough that a point of
# five repetitions costs a few seconds (docs/methodology.md has the measurements).
DEFAULT_MIN_TIME_S = 0.5

# More than this many times the asked work is not a calibration but a different point.
MAX_FACTOR = 1024


def work_param(wl: spec.Workload) -> str | None:
    """The parameter that is the workload's amount of work, if it has one."""
    return (wl.raw.get("work") or {}).get("param")


def factor(timed_ns: float, min_time_s: float) -> int:
    """The power of two (1 when already long enough) that takes timed_ns to min_time_s."""
    if timed_ns <= 0:
        return MAX_FACTOR
    wanted = min_time_s * 1e9 / timed_ns
    if wanted <= 1:
        return 1
    return min(MAX_FACTOR, 2 ** math.ceil(math.log2(wanted)))


def scaled(wl: spec.Workload, params: dict, by: int) -> dict:
    """The work parameter multiplied by `by`, within the spec's maximum; {} if unchanged."""
    name = work_param(wl)
    if not name or by <= 1 or name not in params:
        return {}
    definition = wl.params[name]
    value = params[name] * by
    if definition.get("maximum") is not None:
        value = min(value, definition["maximum"])
    if definition.get("type") == "integer":
        value = int(value)
    return {name: value} if value != params[name] else {}


def applies(wl: spec.Workload, sweep: str | None) -> bool:
    """Whether a point of this workload can be calibrated: it names its work and its
    timed raw fact, and its work is not what the scenario sweeps."""
    name = work_param(wl)
    return bool(name and wl.timed and name != sweep)


def as_asked(wl: spec.Workload, metrics: dict, asked: dict, ran: dict) -> dict:
    """The metrics with those that grow with the work scaled from what ran to what was asked."""
    name = work_param(wl)
    scales = (wl.raw.get("work") or {}).get("scales", [])
    if not name or name not in ran or not ran[name] or asked.get(name) == ran[name]:
        return metrics
    share = asked[name] / ran[name]
    return {k: (v * share if k in scales and isinstance(v, (int, float)) else v) for k, v in metrics.items()}
