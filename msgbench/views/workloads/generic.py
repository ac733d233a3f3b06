"""The section of a workload without its own module, and every section's summary table.

Swept scenarios: the primary metric against x, one trace per run/target/variant.
Scenarios that sweep nothing are one point per target each, so they share one chart
with the scenario on the (category) x axis.
"""

import json

from msgbench.data import model
from msgbench.data.points import target_label
from msgbench.views import figures

_ARROWS = {"higher": " ↑", "lower": " ↓"}


def build(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    metric = data.primary_metric
    if metric is None:
        return []
    groups = model.scenario_groups(data.entries)
    extras = model.distinguishing([json.loads(key[2]) for key in groups])
    items, unswept = [], []
    for (scenario, sweep, _), entries, extra in zip(groups.keys(), groups.values(), extras,
                                                    strict=True):
        if sweep is None:
            unswept.extend(entries)
            continue
        items.append(figures.xy(
            ids.next(), f"{scenario}: {figures.metric_label(metric)} vs {sweep}",
            subtitle=model.describe_params(extra), note=_better_note(data, metric),
            x_label=sweep, y_label=figures.metric_label(metric),
            traces=model.series_traces(data, entries, metric)))
    if unswept:
        def scenario_of(entry: model.Entry) -> str:
            fixed = model.fixed_params(entry.summary)
            return f"{entry.summary['scenario']} {model.describe_params(fixed)}".strip()

        items.append(figures.xy(
            ids.next(), f"{figures.metric_label(metric)} per scenario",
            note=_better_note(data, metric), x_label="scenario",
            y_label=figures.metric_label(metric), bars=True,
            traces=model.series_traces(data, unswept, metric, x_of=scenario_of)))
    return items


def _better_note(data: model.WorkloadData, metric: str) -> str:
    better = data.better(metric)
    direction = {"higher": "higher is better", "lower": "lower is better"}.get(better, "")
    return "; ".join(filter(None, [direction, "error bars: min–max of the repetitions"]))


def summary_table(data: model.WorkloadData, ids: figures.Ids) -> dict:
    """Every summary of the workload: status, repetitions, each metric's median."""
    metrics = model.metric_names(data.entries)
    if data.spec:  # the spec's order, which puts related metrics together
        metrics = [m for m in data.spec.metrics if m in metrics] + [
            m for m in metrics if m not in data.spec.metrics]
    columns = ["run"] if data.multi_run else []
    columns += ["scenario", "target/variant", "params", "status", "ok/total"]
    columns += [figures.metric_label(m) + _ARROWS.get(data.better(m), "") for m in metrics]
    columns.append("warnings and errors")
    rows = []
    for entry in data.entries:
        s = entry.summary
        row = [figures.cell(entry.run.label)] if data.multi_run else []
        status = entry.status
        row += [
            figures.cell(s["scenario"]),
            figures.cell(f"{target_label(s)} ({s.get('variant_label', '')})"),
            figures.cell(model.describe_params(s.get("params") or {})),
            figures.cell(status if status == "ok" else figures.status_text(status), status),
            figures.cell(f"{s.get('ok', '?')}/{s.get('total', '?')}"),
        ]
        row += [figures.value_cell(model.point_of(entry, m, None)) if status == "ok"
                else figures.cell(figures.status_text(status), status) for m in metrics]
        notes = list(s.get("warnings") or [])
        if s.get("error"):
            notes.insert(0, str(s["error"]))
        row.append(figures.cell("; ".join(notes)))
        rows.append(row)
    return figures.table(ids.next(), "All summaries", columns, rows,
                         note="medians of the repetitions; warm-ups excluded")
