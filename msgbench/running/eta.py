"""How long a planned run should take, from earlier runs of the same points, said before
it starts: "about 4 min 50 s (from earlier runs; 3 points never measured)".

Each repetition (warm-ups included) of a point is taken to last as long as the median
worker wall time of that point (workload, target, build, variant, parameters) in the
store's recent runs; a point never measured there is counted, not guessed.
"""

import statistics
from dataclasses import dataclass

from msgbench.data.points import canonical
from msgbench.running.progress import duration

RECENT_RUNS = 20  # the runs read: a store's latest are the best guide to this machine now
WORTH_SAYING_S = 60.0  # a shorter run is over before an estimate could help


@dataclass(frozen=True)
class Estimate:
    seconds: float
    known: int  # points with an earlier measurement
    unknown: int

    def text(self) -> str:
        if not self.known:
            return ""
        never = f"; {self.unknown} point{'s' if self.unknown != 1 else ''} never measured" if self.unknown else ""
        return f"about {duration(self.seconds)} to measure (from earlier runs of the same points{never})"


def _key(workload: str, target: str, build: str, variant: str, params: dict) -> tuple:
    return (workload, target, build or "", variant, canonical(params))


def past_walls(store) -> dict[tuple, float]:
    """The median worker wall time per point over the store's recent runs."""
    walls: dict[tuple, list[float]] = {}
    for run in store.runs(limit=RECENT_RUNS):
        for m in store.measurements(run["id"]):
            wall = (m.get("worker") or {}).get("wall_s")
            if isinstance(wall, (int, float)) and wall > 0:
                key = _key(m["workload"], m["target"], m.get("build") or "", m["variant"], m["params"] or {})
                walls.setdefault(key, []).append(wall)
    return {key: statistics.median(values) for key, values in walls.items()}


def each(jobs, store) -> list[float | None]:
    """Per job: what one repetition took (the median worker wall time in the recent
    runs), or None where it was never measured."""
    walls = past_walls(store)
    return [walls.get(_key(job.scenario.workload, job.target.name, job.target.build_label or "",
                           job.variant.name, job.params)) for job in jobs]


def estimate(jobs, store) -> Estimate:
    seconds, known, unknown = 0.0, 0, 0
    for job, wall in zip(jobs, each(jobs, store), strict=True):
        if wall is None:
            unknown += 1
            continue
        known += 1
        seconds += wall * (job.repeat + job.warmup)
    return Estimate(seconds, known, unknown)
