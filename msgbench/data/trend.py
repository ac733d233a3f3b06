"""A metric over the stored runs, in time order, with its step changes marked.

One series per point (scenario, target, build, variant and parameters); each run that
measured the point gives one entry, the median of its repetitions. A step is a change
between two consecutive entries of a series that the Mann-Whitney U test finds
significant (p < 0.05), as asv marks the commit where a benchmark moved.
"""

from dataclasses import dataclass, field

from msgbench.core import spec
from msgbench.data import stats
from msgbench.data.compare import ALPHA
from msgbench.data.points import describe, target_label


@dataclass
class Entry:
    run_id: str
    started: str
    values: list[float]
    median: float
    change: float | None = None  # relative to the previous entry of the series
    p_value: float | None = None
    step: bool = False


@dataclass
class Series:
    workload: str
    scenario: str
    label: str  # target@build/variant
    point: str  # the parameters
    metric: str
    better: str
    entries: list[Entry] = field(default_factory=list)


def trend(store, workload: str, target: str | None = None, metric: str | None = None) -> list[Series]:
    wl = spec.workload(workload)
    name = metric or wl.primary_metric
    if name not in wl.metrics:
        raise spec.ParamError(f"metric {name!r} is not one of {workload}'s: {', '.join(wl.metrics)}")
    found: dict[tuple, Series] = {}
    for run in reversed(store.runs()):  # oldest first
        values: dict[tuple, list[float]] = {}
        for m in store.measurements(run["id"]):
            if (m["workload"] != workload or m["warmup"] or m["status"] != "ok" or name not in m["metrics"]
                    or (target and m["target"] != target)):
                continue
            key = (m["scenario"], target_label(m), describe(m["params"], first=m.get("sweep")))
            values.setdefault(key, []).append(m["metrics"][name])
            found.setdefault(key, Series(workload, m["scenario"], key[1], key[2], name, wl.metric_better(name)))
        for key, sample in values.items():
            found[key].entries.append(Entry(run["id"], run["created_at"], sample, stats.summarize(sample).median))
    for series in found.values():
        _mark_steps(series)
    return list(found.values())


def _mark_steps(series: Series) -> None:
    for before, after in zip(series.entries, series.entries[1:], strict=False):
        if before.median:
            after.change = after.median / before.median - 1
        after.p_value = stats.mann_whitney(before.values, after.values).p_value
        after.step = after.p_value < ALPHA
