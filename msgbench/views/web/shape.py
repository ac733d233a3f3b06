"""Pasted or stored results in the one shape the results page draws.

A source (one paste, one dropped file, one stored run) becomes:

    {"name", "format": "msgbench-json" | "csv" | "otp", "graphs": [graph, ...]}
    graph = {"key", "title", "subtitle", "x_label", "y_label", "better", "primary",
             "x_ticks", "series": [model.trace(...)]}

Graphs with the same key, from any source, are one scenario: the page overlays them.
fanin throughput graphs are keyed by their OTP title, so a msgbench run and the OTP
suite's own output of the same scenario land on the same axes.
"""

import json

from msgbench.data import model, results
from msgbench.views import figures, workloads
from msgbench.views.formats import otp, registry
from msgbench.views.report import capacity as capacity_figures
from msgbench.views.workloads import fanin

FORMATS = {"json": "msgbench-json", "csv": "csv", "md": "markdown", "otp": "otp"}


class InputError(ValueError):
    """Input the page cannot read: what is wrong, and where (line and column when known)."""

    def __init__(self, message: str, *, line: int | None = None, column: int | None = None,
                 fmt: str | None = None):
        where = f"line {line}, column {column}: " if line is not None else ""
        super().__init__(where + message)
        self.message, self.line, self.column, self.format = message, line, column, fmt

    def as_json(self) -> dict:
        return {"message": str(self), "reason": self.message, "line": self.line,
                "column": self.column, "format": self.format}


# What one source may draw. The page's work and answer grow with the rows and points,
# not the bytes (a 2 MB paste of 100,000 one-line OTP rows shaped into 33 MB in minutes),
# so they are bounded here: a graph of more than a thousand lines cannot be read anyway.
MAX_SERIES = 1_000  # OTP rows, over all graphs of a paste
MAX_POINTS = 100_000  # OTP values, or a document's measurements


def parse_text(text: str, name: str) -> dict:
    """A source from pasted text in any format msgbench writes (formats/registry.py)."""
    body = text.lstrip("\ufeff")
    try:
        fmt = registry.sniff(body)
        if fmt.name == "otp":  # drawn as the OTP page draws it, row labels and all
            try:
                graphs = otp.parse(body)
            except otp.ParseError as err:
                raise registry.FormatError(err.reason, "otp", err.line, err.column) from None
            _check_size(sum(len(g["rows"]) for g in graphs),
                        sum(len(g["rows"]) * len(g["x"]) for g in graphs), "rows", "values")
            return from_otp(graphs, name)
        doc = fmt.read(body, "the document")
    except registry.FormatError as err:
        raise InputError(err.reason, line=err.line, column=err.column, fmt=err.format or None) from None
    _check_size(0, sum(len(run.get("measurements") or []) for run in doc["runs"]), "rows", "measurements")
    _recompute_summaries(doc)
    return from_document(doc, name, fmt.name)


def _check_size(series: int, points: int, series_name: str, points_name: str) -> None:
    if series > MAX_SERIES:
        raise InputError(f"{series:,} {series_name}: the page draws at most {MAX_SERIES:,} in one source; "
                         "paste fewer at a time")
    if points > MAX_POINTS:
        raise InputError(f"{points:,} {points_name}: the page draws at most {MAX_POINTS:,} in one source; "
                         "paste fewer at a time")


def _recompute_summaries(doc: dict) -> None:
    """Each run's summaries computed here from its measurements, as `msgbench import` and
    `show` do: a pasted document's own `summary` is never drawn, since nothing ties it to
    the measurements beside it (a summary of made-up figures, or a median of "fast",
    would be drawn as given). A run with summaries and no measurements is refused."""
    for i, run in enumerate(doc["runs"]):
        measurements = run.get("measurements") or []
        if run.get("summary") and not measurements:
            raise InputError(f"runs[{i}] has a summary but no measurements: the page draws only what it can "
                             "compute from the measurements (export the run with them)", fmt="json")
        precision = ((run.get("metadata") or {}).get("precision") or {}).get("target")
        precision = precision if isinstance(precision, (int, float)) and not isinstance(precision, bool) else None
        run["summary"] = results.summarize_run(measurements, precision)


# ---------------------------------------------------------------- msgbench documents


def from_document(doc: dict, name: str, fmt: str = "json") -> dict:
    graphs = []
    for data in model.collect(doc, workloads.order):
        graphs += workloads.plugin(data.workload).page_graphs(data)
        graphs += _scenario_graphs(data)
    graphs += capacity_figures.page_graphs(doc)
    for graph in graphs:  # one colour per target, as in the report (figures.style)
        figures.beside_their_systems(figures.style(graph["series"]))
    return {"name": name, "format": FORMATS[fmt], "graphs": graphs}


def _scenario_graphs(data: model.WorkloadData) -> list[dict]:
    """Every other metric of every scenario: against the swept param, or per scenario."""
    plugin = workloads.plugin(data.workload)
    skip = plugin.page_skips
    graphs = []
    for (scenario, sweep, fixed), entries in model.scenario_groups(data.entries).items():
        x_of = None if sweep else (lambda e: e.summary["scenario"])
        # Drawn by default: what the Findings judge the scenario by (realistic chat: its
        # latency p99 and achieved rate, not the offered load), else its primary metric.
        judged = set(plugin.judged_by(entries[0].params)) or {data.judged_metric(entries[0].params)}
        for metric in model.metric_names(entries):
            if metric in skip:
                continue
            graphs.append({
                "key": "|".join((data.workload, scenario, sweep or "", fixed, metric)),
                "title": f"{scenario}: {figures.metric_label(metric)}",
                "subtitle": model.describe_params(json.loads(fixed)),
                "x_label": sweep or "scenario", "y_label": figures.metric_label(metric),
                "better": data.better(metric), "primary": metric in judged,
                "x_ticks": "auto",
                "series": model.series_traces(data, entries, metric, x_of=x_of),
            })
    return graphs


# ---------------------------------------------------------------- OTP text


def from_otp(graphs: list[dict], name: str) -> dict:
    shaped: dict[str, dict] = {}  # by key: the graphs of runs pasted one after another, drawn as one
    for graph, runs in zip(graphs, otp.runs_of(graphs), strict=True):
        key = "otp|" + otp.graph_key(graph["title"])
        series = shaped.setdefault(key, {"key": key, "title": graph["title"], "subtitle": "", "primary": True,
                                         "series": [], **fanin.OTP_AXES})["series"]
        for row, run in zip(graph["rows"], runs, strict=True):
            points = [model.Point(x, v, status=s) for x, v, s in
                      zip(graph["x"], row["values"], row["status"], strict=True)]
            # A later run with the same label stays a series of its own, named as the OTP page names it.
            series.append(model.trace(otp.run_label(row["label"], run), points))
    for graph in shaped.values():
        figures.style(graph["series"])  # colour by the target the row label names, as msgbench's own
    return {"name": name, "format": "otp", "graphs": list(shaped.values())}
