"""The report's History section: the report's scenarios in every stored run, over time.

`msgbench report RUN` adds it by itself whenever the store holds another run of the
same scenarios (what a user wants when reporting their latest run: did it move?);
there is no flag to ask for it, and nothing is drawn from a store with one run.

One chart per scenario (and fixed parameters), at the scenario's largest x — the
point that loads the system most, where a regression shows first; `msgbench history
--trend WORKLOAD` lists every point. One line per target/build/variant over the runs
in time order (x: when each run started), the median of each run's repetitions; the
step changes trend.py finds (a Mann-Whitney U test against the run before) are
ringed, and a point's tooltip gives the change and its p value.
"""

from msgbench.core import spec
from msgbench.data import model, trend
from msgbench.data.points import describe
from msgbench.views import figures, workloads

STEP_COLOUR = "#000000"


def history_figures(store, doc: dict) -> list[dict]:
    """The trend charts of doc's scenarios, or [] when no scenario has two runs."""
    ids = figures.Ids("history")
    items = []
    for data in model.collect(doc, workloads.order):
        if data.spec is None:
            continue
        # (scenario, point) at each scenario's largest x, by the metric it is judged by
        # (socket echo: round trip, not the spec's bandwidth).
        wanted: dict[str, set] = {}
        for (_scenario, sweep, _fixed), entries in model.scenario_groups(data.entries).items():
            top = max(entries, key=lambda e: model.sort_key(e.summary.get("x")))
            metric = data.judged_metric(top.params)
            wanted.setdefault(metric, set()).add((top.summary["scenario"],
                                                  describe(top.params, first=sweep)))
        for metric, points in wanted.items():
            by_scenario: dict[str, list[trend.Series]] = {}
            for series in trend.trend(store, data.workload, metric=metric):
                if (series.scenario, series.point) in points and len(series.entries) > 1:
                    by_scenario.setdefault(series.scenario + " " + series.point, []).append(series)
            items += [_figure(ids.next(), found, data.spec) for found in by_scenario.values()]
    return items


def _figure(fig_id: str, found: list[trend.Series], wl: spec.Workload) -> dict:
    first = found[0]
    traces = []
    steps = []
    for series in found:
        points = []
        for entry in series.entries:
            note = f"run {entry.run_id}"
            if entry.change is not None and entry.p_value is not None:
                note += (f"; {entry.change:+.1%} vs the run before (p = {entry.p_value:.2g}"
                         f"{', a step change' if entry.step else ''})")
            points.append(model.Point(_when(entry.started), entry.median, min(entry.values),
                                      max(entry.values), len(entry.values), "ok", note))
            if entry.step:
                steps.append(model.Point(_when(entry.started), entry.median, note=note))
        traces.append(model.trace(series.label, points, target=series.label.split("@")[0].split("/")[0],
                                  member=series.label.split("/", 1)[-1]))
    if steps:
        step = model.trace("step change (p < 0.05)", steps)
        step.update(colour=STEP_COLOUR, marker="ring", line="none", fixed=True)
        traces.append(step)
    better = {"higher": "higher is better", "lower": "lower is better"}.get(first.better, "")
    return figures.xy(
        fig_id, f"{first.scenario}: {figures.metric_label(first.metric)} over the stored runs",
        subtitle=first.point, x_label="run started (UTC)", y_label=figures.metric_label(first.metric),
        x_scale="category", traces=traces,
        # Targets an order of magnitude apart (erlang's and c's echo round trips) would
        # flatten the faster ones at the bottom of a linear axis.
        y_scale=figures.auto_scale([v for t in traces for v in t["y"]], span=10),
        note="; ".join(filter(None, [better, "median of each run; error bars: min–max",
                                     f"every point: msgbench history --trend {first.workload}"])))


def _when(started: str) -> str:
    """2026-11-22T05:15:00+00:00 -> 2026-11-22 05:15:00 (sorts in time order as text)."""
    return str(started or "?")[:19].replace("T", " ")

