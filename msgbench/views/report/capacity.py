"""The capacity section: each capacity run's answer per system, its latency-throughput
curve (p50, p90, p99, p99.9 and max against offered load, log y, the bound drawn and
the knee marked) and the percentile spectrum at the capacity; the same curves for the
results page. The data is capacity_view's, so the terminal and the pictures agree.
"""

from msgbench.data import model
from msgbench.running import capacity
from msgbench.views import capacity_view, figures

BOUND_COLOUR = "#444444"
KNEE_COLOUR = "#d62728"
CURVE_LINES = ((50.0, "p50"), (90.0, "p90"), (99.0, "p99"), (99.9, "p99.9"))


def _ms(ns: float | None) -> float | None:
    return None if ns is None else ns / 1e6


def _views(doc: dict) -> list[tuple[dict, capacity_view.RunView]]:
    found = []
    for run in doc.get("runs") or []:
        if isinstance(run, dict) and (view := capacity_view.of_run(run)) is not None:
            found.append((run, view))
    return found


def curve_traces(view: capacity_view.RunView, system: capacity_view.SystemView) -> list[dict]:
    """The system's percentiles and max against offered load, then the bound and the knee."""
    target, member = system.label.split("/", 1)[0].split("@")[0], system.label.split("/", 1)[-1]
    traces = []
    lines = [*((q, name) for q, name in CURVE_LINES), (None, "max")]
    # The bounded percentile stands out: a solid line in the target's own colour; the
    # others dashed, in lighter or darker shades of it.
    bounded = next((i for i, (q, _) in enumerate(lines) if q == view.slo.percentile), None)
    others = iter(range(1, len(lines) + 1))
    for index, (q, name) in enumerate(lines):
        dash = 0 if index == bounded else next(others)
        points = []
        for p in system.points:
            value = p.max_ns if q is None else p.percentiles_ns.get(q)
            note = f"{p.runs} run{'s' if p.runs > 1 else ''}; {'held' if p.held else 'not held'}: {p.why}"
            points.append(model.Point(p.offered, _ms(value), n=p.runs, status="ok" if value else "missing",
                                      note=note))
        # Each line a shade of the target's colour as well as a dash: five lines on one chart.
        traces.append(model.trace(f"{system.label} {name}", points, dash=dash, target=target,
                                  member=member if index == bounded else f"{member} {name}"))
    xs = [p.offered for p in system.points]
    if xs:
        bound = model.trace(f"bound: {view.slo.name} <= {capacity.format_ns(view.slo.bound_ns)}",
                            [model.Point(x, _ms(view.slo.bound_ns)) for x in xs])
        bound.update(colour=BOUND_COLOUR, marker="circle", line="dashed", fixed=True)
        traces.append(bound)
    if system.knee is not None:
        k = system.knee
        knee = model.trace(f"knee: {k.offered:,.0f} {view.axis.unit}",
                           [model.Point(k.offered, _ms(k.percentiles_ns.get(view.slo.percentile)),
                                        note="the point before the steepest rise of the bounded percentile")])
        knee.update(colour=KNEE_COLOUR, marker="ring", line="none", fixed=True)
        traces.append(knee)
    return traces


def curve_figure(fig_id: str, view: capacity_view.RunView, system: capacity_view.SystemView) -> dict:
    return figures.xy(
        fig_id, f"{system.label}: latency against offered load",
        subtitle=capacity_view.headline(view, system),
        x_label=f"offered {view.axis.name} ({view.axis.unit})", y_label="latency (ms)",
        traces=curve_traces(view, system), y_scale="log",
        note=("each point: every run at that load, histograms merged (never percentiles averaged); "
              f"the dashed line is the bound; the ring the knee; {view.slo.describe()}"))


def spectrum_figure(fig_id: str, view: capacity_view.RunView, system: capacity_view.SystemView) -> dict | None:
    if not system.spectrum:
        return None
    target, member = system.label.split("/", 1)[0].split("@")[0], system.label.split("/", 1)[-1]
    # HdrHistogram's x: 1 / (1 - q), so p50 is at 2, p90 at 10, p99 at 100, p99.9 at 1,000.
    points = [model.Point(1 / (1 - q / 100), _ms(ns), note=f"p{q:g}") for q, ns in system.spectrum if q < 100]
    top = system.result.get("capacity")
    maximum = system.spectrum[-1][1]
    return figures.xy(
        fig_id, f"{system.label}: percentile spectrum at {top:,.0f} {view.axis.unit}",
        subtitle=(f"every run at the capacity, merged; max {capacity.format_ns(maximum)} "
                  "(HdrHistogram's spectrum: each point halves the distance to 100%)"),
        x_label="percentile as 1/(1 - q): 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9", y_label="latency (ms)",
        x_scale="log", y_scale="log", traces=[model.trace(system.label, points, target=target, member=member)])


def result_table(fig_id: str, view: capacity_view.RunView, run_id: str) -> dict:
    rows = []
    for system in view.systems:
        r = system.result
        top = r.get("capacity")
        rows.append([figures.cell(system.label), figures.cell(str(r.get("status"))),
                     figures.cell("—" if top is None else f"{top:,.0f}"), figures.cell(str(r.get("steps", ""))),
                     figures.cell(str(r.get("why", "")))])
    return figures.table(fig_id, f"Capacity under {view.slo.describe()} (run {run_id})",
                         ["system", "result", f"capacity ({view.axis.unit})", "steps", "why"], rows,
                         note="found: the highest load held, to within the search's precision, confirmed by "
                              "repeated runs; machine limit: held at the most this machine can run")


def section(doc: dict) -> dict | None:
    found = _views(doc)
    if not found:
        return None
    items = []
    for r, (run, view) in enumerate(found):
        items.append(result_table(f"capacity-{r}-table", view, run.get("id", "?")))
        for s, system in enumerate(view.systems):
            items.append(curve_figure(f"capacity-{r}-{s}-curve", view, system))
            spectrum = spectrum_figure(f"capacity-{r}-{s}-spectrum", view, system)
            if spectrum:
                items.append(spectrum)
    return {"id": "capacity", "workload": "capacity", "title": "Capacity: the highest load under a latency bound",
            "description": ("A doubling ramp, then bisection, each step a verified measurement; the top confirmed "
                            "by repeated runs (docs/user-guide.md, 'Reading a capacity')."),
            "seed": "", "items": items, "summary_table": None}


def page_graphs(doc: dict) -> list[dict]:
    """The curves for the results page (web/shape.py's graph shape), log y."""
    graphs = []
    for run, view in _views(doc):
        for system in view.systems:
            graphs.append({
                "key": f"capacity|{run.get('id')}|{system.label}", "title": f"{system.label}: latency against "
                f"offered load", "subtitle": capacity_view.headline(view, system),
                "x_label": f"offered {view.axis.name} ({view.axis.unit})", "y_label": "latency (ms)",
                "better": "lower", "primary": True, "x_ticks": "auto", "y_scale": "log",
                "series": curve_traces(view, system)})
    return graphs
