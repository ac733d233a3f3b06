"""Shape a results document into the points and traces the pictures draw.

Everything here is plain data in, plain data out, so the report, the PNG writer and
the results page share one way of turning summaries into numbers — and the rules
that matter most live in one place: a point whose summary is not `ok` carries its
status (n/a or failed) and no number, never a zero.
"""

import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from msgbench.core import spec
from msgbench.data import results
from msgbench.data.points import canonical, target_label, value_text


@dataclass(frozen=True)
class RunInfo:
    index: int
    id: str
    label: str


@dataclass(frozen=True)
class Entry:
    """One summary (one point of one scenario, target and variant) with its run."""

    run: RunInfo
    summary: dict

    @property
    def workload(self) -> str:
        return self.summary["workload"]

    @property
    def params(self) -> dict:
        return self.summary.get("params") or {}

    @property
    def status(self) -> str:
        return self.summary.get("status", "failed")

    def series_key(self) -> tuple:
        return (self.run.index, self.summary["target"], self.summary.get("build") or "", self.summary["variant"])


@dataclass(frozen=True)
class Point:
    """One value of a trace; y is None whenever status is not ok."""

    x: object
    y: float | None
    lo: float | None = None
    hi: float | None = None
    n: int = 0
    status: str = "ok"  # ok | unsupported | failed | timeout | ... | missing
    note: str = ""


@dataclass
class WorkloadData:
    """What a workload's section is drawn from."""

    workload: str
    spec: spec.Workload | None
    entries: list[Entry]
    runs: list[RunInfo]
    # The workload's measurements (repetitions, warm-ups excluded) with their runs: what
    # per-repetition pictures (a measurement's time series) are drawn from.
    measurements: list[tuple[RunInfo, dict]] = field(default_factory=list)
    multi_run: bool = field(init=False)

    def __post_init__(self):
        self.multi_run = len({e.run.index for e in self.entries}) > 1

    @property
    def primary_metric(self) -> str | None:
        if self.spec:
            return self.spec.primary_metric
        names = metric_names(self.entries)
        return names[0] if names else None

    def judged_metric(self, params: dict) -> str | None:
        """The metric a point with these params is judged by (socket echo: its round trip)."""
        return self.spec.judged_metric(params) if self.spec else self.primary_metric

    def better(self, metric: str) -> str:
        return self.spec.metric_better(metric) if self.spec else "none"

    def label(self, entry: Entry) -> str:
        return series_label(entry, self.multi_run)


def workload_spec(name: str) -> spec.Workload | None:
    return spec.workloads().get(name)


def runs_of(doc: dict) -> list[dict]:
    runs = doc.get("runs") if isinstance(doc, dict) else None
    if not isinstance(runs, list):
        raise ValueError('not a msgbench results document: it has no "runs" list')
    return runs


def run_infos(doc: dict) -> list[RunInfo]:
    return [RunInfo(i, str(run.get("id") or f"run {i + 1}"), str(run.get("id") or f"run {i + 1}"))
            for i, run in enumerate(runs_of(doc))]


def summaries_of(run: dict) -> list[dict]:
    """The run's summaries, computed from its measurements when the document has none."""
    summary = run.get("summary")
    if summary:
        return summary
    measurements = run.get("measurements") or []
    return results.summarize_run(measurements) if measurements else []


def collect(doc: dict, order: Callable[[Iterable[str]], list[str]] = sorted) -> list[WorkloadData]:
    """Every workload in the document with its summaries; order sorts the workloads'
    names (workloads.order: the sections' order)."""
    infos = run_infos(doc)
    by_workload: dict[str, list[Entry]] = {}
    measured: dict[str, list[tuple[RunInfo, dict]]] = {}
    for info, run in zip(infos, runs_of(doc), strict=True):
        for summary in summaries_of(run):
            by_workload.setdefault(summary["workload"], []).append(Entry(info, summary))
        for m in run.get("measurements") or []:
            if isinstance(m, dict) and not m.get("warmup") and "workload" in m:
                measured.setdefault(m["workload"], []).append((info, m))
    return [WorkloadData(w, workload_spec(w), by_workload[w], infos, measured.get(w, []))
            for w in order(by_workload)]


# ---------------------------------------------------------------- grouping


def fixed_params(summary: dict, also_free: Iterable[str] = ()) -> dict:
    """The params that stay fixed along the scenario's x axis."""
    free = {summary.get("sweep"), *also_free}
    return {k: v for k, v in (summary.get("params") or {}).items() if k not in free}


def group_by(items: Iterable, key: Callable) -> dict:
    """Items grouped by key, groups and members in first-seen order."""
    groups: dict = {}
    for item in items:
        groups.setdefault(key(item), []).append(item)
    return groups


def scenario_groups(entries: Iterable[Entry]) -> dict[tuple, list[Entry]]:
    """One group per scenario: same name, same swept param, same fixed params."""
    return group_by(entries, lambda e: (
        e.summary["scenario"], e.summary.get("sweep"), canonical(fixed_params(e.summary))))


def distinguishing(param_sets: list[dict]) -> list[dict]:
    """For each param set, only the params whose value differs between the sets."""
    keys = {k for params in param_sets for k in params}
    varying = sorted(k for k in keys if len({canonical(p.get(k)) for p in param_sets}) > 1)
    return [{k: p.get(k) for k in varying if k in p} for p in param_sets]


def describe_params(params: dict) -> str:
    return ", ".join(f"{k}={value_text(v)}" for k, v in params.items())


def series_label(entry: Entry, multi_run: bool) -> str:
    label = target_label(entry.summary)
    return f"{entry.run.label} {label}" if multi_run else label


def source_of(entry: Entry, multi_run: bool) -> str:
    """What marks a trace's run and build apart (marker, dash), as its legend heading
    says it: "RUN", "build master", "RUN, build master", or "" (one run, no builds)."""
    build = entry.summary.get("build") or ""
    run = entry.run.label if multi_run else ""
    return ", ".join(filter(None, [run, f"build {build}" if build else ""]))


# ---------------------------------------------------------------- time series
#
# A measurement may carry "series": samples taken while it ran, each {"t_ms": ms since
# the measurement started, "<name>_<unit>": number, ...} (chat's memory by kind over
# time). Read tolerantly: anything that is not a list of such samples is no series.

SERIES_UNITS = ("_bytes", "_count", "_ns", "_per_s", "_percent")
CUMULATIVE_BYTES = ("_io_", "_allocated_")


def series_samples(measurement: dict) -> list[dict]:
    samples = measurement.get("series")
    if not isinstance(samples, list):
        return []
    return [s for s in samples if isinstance(s, dict) and _number(s.get("t_ms"))]


def series_names(samples: list[dict]) -> dict[str, list[str]]:
    """The sampled value names, grouped by unit suffix (in SERIES_UNITS order). Bytes
    counted since the start (a runtime's I/O, Erlang's io_in and io_out; allocations, Go's
    allocated) only grow: a group of their own ("_bytes_so_far"), so they do not pass for
    memory."""
    groups: dict[str, list[str]] = {}
    names = dict.fromkeys(k for s in samples for k, v in s.items() if k != "t_ms" and _number(v))
    for unit in SERIES_UNITS:
        members = [n for n in names if n.endswith(unit)]
        if unit == "_bytes":
            so_far = [n for n in members if any(c in n for c in CUMULATIVE_BYTES)]
            members = [n for n in members if n not in so_far]
            if members:
                groups[unit] = members
            if so_far:
                groups["_bytes_so_far"] = so_far
        elif members:
            groups[unit] = members
    return groups


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def metric_names(entries: Iterable[Entry]) -> list[str]:
    names: dict[str, None] = {}
    for entry in entries:
        names.update(dict.fromkeys(entry.summary.get("metrics") or {}))
    return list(names)


# ---------------------------------------------------------------- points and traces


def point_of(entry: Entry | None, metric: str, x: object) -> Point:
    """The value of one metric at one point, or why there is none."""
    if entry is None:
        return Point(x, None, status="missing")
    summary = entry.summary
    total = summary.get("total", 0)
    if entry.status != "ok":
        return Point(x, None, n=0, status=entry.status, note=_failure_note(summary))
    stats = (summary.get("metrics") or {}).get(metric)
    if not stats or stats.get("median") is None:
        return Point(x, None, status="missing", note=f"{metric} was not reported")
    # A warning about another metric ("hops_per_s: too noisy") is not this point's business.
    others = [f"{name}:" for name in summary.get("metrics") or {} if name != metric]
    note = "; ".join(w for w in summary.get("warnings") or [] if not w.startswith(tuple(others)))
    if summary.get("ok", total) < total:
        note = note or f"{summary['ok']} of {total} repetitions ok"
    return Point(x, results.point_value(stats), stats.get("min"), stats.get("max"),
                 stats.get("n", summary.get("ok", 0)), "ok", note)


def _failure_note(summary: dict) -> str:
    what = "not applicable" if summary.get("status") == "unsupported" else summary.get("status")
    error = summary.get("error")
    return f"{what}: {error}" if error else str(what)


def pool(points: list[Point], x: object) -> Point:
    """Several points measuring the same thing (e.g. ring creation at each m) as one.

    The median of the medians, with the widest min..max, so no repetition is hidden.
    """
    ok = [p for p in points if p.status == "ok"]
    if not ok:
        real = [p for p in points if p.status != "missing"]
        return real[0] if real else Point(x, None, status="missing")
    los = [p.lo for p in ok if p.lo is not None]
    his = [p.hi for p in ok if p.hi is not None]
    return Point(x, statistics.median(p.y for p in ok), min(los, default=None),
                 max(his, default=None), sum(p.n for p in ok), "ok",
                 "; ".join(dict.fromkeys(p.note for p in ok if p.note)))


def trace(label: str, points: list[Point], *, axis: str = "y", dash: int = 0,
          colour_key: str | None = None, target: str = "", source: str = "",
          member: str = "") -> dict:
    """A trace as the plotting code takes it: parallel lists, one item per point.

    colour_key: traces that share it share a colour (a target's message rate and its
    payload rate on the second axis); the label by default.
    target, source, member: what figures.style colours and marks the trace by — the
    target picks the colour family, member (variant and split) the shade within it,
    source (run and build) the marker and dash. Empty: taken from the label.
    """
    return {
        "label": label,
        "colour_key": colour_key or label,
        "target": target,
        "source": source,
        "member": member,
        "axis": axis,
        "dash": dash,
        "x": [p.x for p in points],
        "y": [p.y for p in points],
        "lo": [p.lo for p in points],
        "hi": [p.hi for p in points],
        "n": [p.n for p in points],
        "status": [p.status for p in points],
        "note": [p.note for p in points],
    }


def entry_trace(data: WorkloadData, entry: Entry, points: list[Point]) -> dict:
    """A trace of one series (entry's run, target, build and variant), labelled and
    marked for figures.style as series_traces marks its own."""
    return trace(data.label(entry), points, target=entry.summary["target"],
                 source=source_of(entry, data.multi_run), member=entry.summary["variant"]) | {
        "measures": measured_system(entry.summary)}


def measured_system(summary: dict) -> str:
    """The system a reference tool measures (its first reference_for's target: nats for
    nats bench), so it is drawn in that system's colour; "" for a system, or a tool of
    every system."""
    if summary.get("variant_label") != "reference":
        return ""
    measured = next(iter(summary.get("reference_for") or []), None)
    return measured.split("/", 1)[0] if isinstance(measured, str) and measured else ""


def sort_key(x: object) -> tuple:
    """Numbers in numeric order, then anything else in text order."""
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return (0, x, "")
    return (1, 0, str(x))


def series_traces(data: WorkloadData, entries: list[Entry], metric: str,
                  x_of: Callable[[Entry], object] | None = None,
                  split: Callable[[Entry], str] | None = None, suffix: str = "",
                  axis: str = "y", dash: int = 0, colour_by_series: bool = False) -> list[dict]:
    """One trace per run/target/variant (and per split value): the metric at every x.

    split names what else sets entries of one chart apart ("sockets=16"); it joins
    the label in brackets. suffix is appended to every label ("received").
    colour_by_series: a series' traces of several metrics share its colour (pubsub's
    solid message rate and dashed payload rate); otherwise each label has its own.
    dash: the metric's place among several metrics of one chart (0 first: solid; 1, 2...
    the figures.METRIC_LINES), so p50, p99 and max of one series read apart.
    """
    x_of = x_of or (lambda e: e.summary.get("x"))
    split = split or (lambda e: "")
    xs = sorted({x_of(e) for e in entries}, key=sort_key)
    traces = []
    for members in group_by(entries, lambda e: (e.series_key(), split(e))).values():
        at = {x_of(e): e for e in members}
        series = " ".join(filter(None, [data.label(members[0]),
                                        f"[{split(members[0])}]" if split(members[0]) else ""]))
        label = " ".join(filter(None, [series, suffix]))
        first = members[0]
        traces.append(trace(label, [point_of(at.get(x), metric, x) for x in xs], axis=axis,
                            dash=dash, colour_key=series if colour_by_series else label,
                            target=first.summary["target"], source=source_of(first, data.multi_run),
                            member=" ".join(filter(None, [first.summary["variant"], split(first)])))
                      | {"series": series, "measures": measured_system(first.summary)})
    return traces


def splitter(entries: list[Entry], fixed: Iterable[str]) -> Callable[[Entry], str]:
    """What sets an entry apart from the others of its chart: the params that vary
    among the entries, other than the x param and those the chart is about (fixed)."""
    skip = set(fixed)
    params = [{k: v for k, v in e.params.items() if k not in skip} for e in entries]
    names = {id(e): describe_params(d) for e, d in zip(entries, distinguishing(params),
                                                        strict=True)}
    return lambda entry: names.get(id(entry), "")


def has_numbers(traces: list[dict]) -> bool:
    return any(y is not None for t in traces for y in t["y"])
