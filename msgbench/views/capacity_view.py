"""A capacity run for people: each system's capacity, its latency-throughput curve and
the percentile spectrum at its capacity, as plain data (`systems`) and as terminal
text (`lines`). The report's section (msgbench/views/report/capacity.py) draws the same data.
"""

import math
import textwrap
from dataclasses import dataclass

from msgbench.running import capacity, capacity_run


@dataclass
class SystemView:
    label: str
    result: dict  # capacity_run.result_of: status, capacity, why, steps, runs_at_capacity
    points: list[capacity.CurvePoint]
    knee: capacity.CurvePoint | None
    spectrum: list[tuple[float, float]]  # at the capacity, every run there merged


@dataclass
class RunView:
    axis: capacity_run.Axis
    slo: capacity.Slo
    systems: list[SystemView]


def of_run(run: dict) -> RunView | None:
    """The capacity view of a run (metadata and measurements as the store or a results
    document holds them); None for a run that is no capacity search."""
    found = capacity_run.axis_of_run(run.get("metadata") or {})
    if found is None:
        return None
    axis, slo = found
    results = run["metadata"]["capacity"].get("results")
    results = results if isinstance(results, dict) else {}
    systems = []
    try:
        found_by_system = capacity_run.by_system(axis, run.get("measurements") or [])
    except (KeyError, TypeError, ValueError, ZeroDivisionError):  # steps without the axis's parameters
        return None
    for label, by_load in found_by_system.items():
        points = capacity.curve(slo, by_load)
        result = _result(results.get(label))
        top = result.get("capacity")
        spectrum = []
        if top is not None and top in by_load:
            buckets, maximum = capacity.merged([o for o in by_load[top] if o.status == "ok"])
            spectrum = capacity.spectrum(buckets, maximum)
        systems.append(SystemView(label, result, points, capacity.knee(points, slo.percentile), spectrum))
    return RunView(axis, slo, systems)


def _result(raw) -> dict:
    """A stored result as the view shows it; anything malformed (an imported document)
    as no result."""
    none = {"status": "searching", "capacity": None, "why": "no result stored", "steps": 0, "runs_at_capacity": 0}
    if not isinstance(raw, dict):
        return none
    top = raw.get("capacity")
    if top is not None and (not isinstance(top, (int, float)) or isinstance(top, bool)):
        return none
    return none | {k: raw[k] for k in none if k in raw} | {"why": str(raw.get("why", "")),
                                                             "status": str(raw.get("status", "searching"))}


def headline(view: RunView, system: SystemView) -> str:
    """One line: what the system holds under the bound, or why there is no such load."""
    r, unit = system.result, view.axis.unit
    status, top = r.get("status"), r.get("capacity")
    if status == capacity.FOUND:
        return (f"{system.label}: capacity {top:,.0f} {unit} at {view.slo.name} <= "
                f"{capacity.format_ns(view.slo.bound_ns)} (confirmed by {r.get('runs_at_capacity')} runs; "
                f"{r.get('steps')} steps: {r.get('why')})")
    if status == capacity.MACHINE_LIMIT:
        return f"{system.label}: at least {top:,.0f} {unit}: {r.get('why')}"
    if status == capacity.NEVER:
        return (f"{system.label}: never meets {view.slo.name} <= {capacity.format_ns(view.slo.bound_ns)} "
                f"({r.get('why')} {unit})")
    if status == capacity.STEP_LIMIT:
        shown = f"{top:,.0f} {unit} held, not confirmed" if top is not None else "no load held"
        return f"{system.label}: no capacity: {r.get('why')} ({shown})"
    return f"{system.label}: no capacity: {status} ({r.get('why')})"


def _ns(value: float | None) -> str:
    return "—" if value is None else capacity.format_ns(value)


def curve_table(view: RunView, system: SystemView) -> list[str]:
    """The curve as rows (within 80 columns): offered, achieved, runs, the percentiles,
    max, the verdict; the capacity and the knee marked."""
    rows = [f"  {'offered':>9} {'achieved':>9} {'n':>2} {'p50':>8} {'p90':>8} {'p99':>8} {'p99.9':>8} {'max':>8}"
            f"  verdict"]
    top = system.result.get("capacity")
    confirmed = system.result.get("status") in (capacity.FOUND, capacity.MACHINE_LIMIT)
    for p in system.points:
        q = p.percentiles_ns
        marks = []
        if top is not None and p.offered == top:
            marks.append("C" if confirmed else "C?")
        if system.knee is not None and p.offered == system.knee.offered:
            marks.append("K")
        achieved = "—" if p.achieved is None else f"{p.achieved:,.0f}"
        rows.append(f"  {p.offered:>9,.0f} {achieved:>9} {p.runs:>2} {_ns(q[50.0]):>8} {_ns(q[90.0]):>8} "
                    f"{_ns(q[99.0]):>8} {_ns(q[99.9]):>8} {_ns(p.max_ns):>8}  "
                    f"{'held' if p.held else 'no'}{' ' + ' '.join(marks) if marks else ''}")
    rows.append("  C: capacity (C?: not confirmed); K: knee, before the steepest rise")
    return rows


def chart(view: RunView, system: SystemView, height: int = 10) -> list[str]:
    """The bounded percentile against offered load, log y, one column per load in order:
    '*' the percentile, '-' the bound, 'K' the knee's column, 'C' the capacity's."""
    q = view.slo.percentile
    values = [(p.offered, p.percentiles_ns.get(q) or capacity.percentile_ns({}, q, None)) for p in system.points]
    values = [(x, y) for x, y in values if y]
    if len(values) < 2:
        return []
    ys = [y for _, y in values] + [view.slo.bound_ns]
    lo, hi = math.log10(min(ys)), math.log10(max(ys))
    span = max(hi - lo, 1e-9)

    def row_of(ns: float) -> int:
        return round((math.log10(ns) - lo) / span * (height - 1))

    grid = [[" "] * len(values) for _ in range(height)]
    bound_row = row_of(view.slo.bound_ns)
    for column in range(len(values)):
        grid[bound_row][column] = "-"
    for column, (_, y) in enumerate(values):
        grid[row_of(y)][column] = "*"
    lines = []
    for r in range(height - 1, -1, -1):
        label = (capacity.format_ns(view.slo.bound_ns) if r == bound_row else
                 capacity.format_ns(10 ** (lo + span * r / (height - 1))) if r in (0, height - 1) else "")
        lines.append(f"  {label:>9} |" + "".join(f" {c}" for c in grid[r]))
    marks = []
    top = system.result.get("capacity")
    for x, _ in values:
        mark = "C" if top is not None and x == top else "K" if system.knee and x == system.knee.offered else " "
        marks.append(f" {mark}")
    lines.append(f"  {'':>9} +" + "--" * len(values))
    lines.append(f"  {'':>9}  " + "".join(marks))
    lines.append(f"  {view.slo.name} at each load in turn (log scale); '-' the bound")
    return lines


def lines(view: RunView, detail: bool = True) -> list[str]:
    out = [f"capacity: {view.axis.workload} {view.axis.name} under {view.slo.describe()}"]
    for system in view.systems:
        out += textwrap.wrap(headline(view, system), 79, subsequent_indent="  ")
    if not detail:
        return out
    for system in view.systems:
        out += ["", f"{system.label}: latency against offered {view.axis.name} ({view.axis.unit})",
                f"  bound {view.slo.name} <= {capacity.format_ns(view.slo.bound_ns)}; n: runs at the load, merged"]
        out += curve_table(view, system)
        out += chart(view, system)
        if system.spectrum:
            text = (f"percentile spectrum at the capacity ({system.result.get('capacity'):,.0f} {view.axis.unit}, "
                    "runs merged): " + ", ".join(f"p{q:.6g} {capacity.format_ns(ns)}" for q, ns in system.spectrum))
            out += ["  " + line for line in textwrap.wrap(text, 76)]
    return out
