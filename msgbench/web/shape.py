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

from msgbench import figures, model, workloads
from msgbench.formats import otp, registry
from msgbench.workloads import fanin

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


def parse_text(text: str, name: str) -> dict:
    """A source from pasted text in any format msgbench writes (formats/registry.py)."""
    body = text.lstrip("\ufeff")
    try:
        fmt = registry.sniff(body)
        if fmt.name == "otp":  # drawn as the OTP page draws it, row labels and all
            try:
                return from_otp(otp.parse(body), name)
            except otp.ParseError as err:
                raise registry.FormatError(err.reason, "otp", err.line, err.column) from None
        doc = fmt.read(body, "the document")
    except registry.FormatError as err:
        raise InputError(err.reason, line=err.line, column=err.column, fmt=err.format or None) from None
    _check_summaries(doc)
    return from_document(doc, name, fmt.name)


def _check_summaries(doc: dict) -> None:
    required = ("scenario", "workload", "target", "variant", "status")
    for i, run in enumerate(doc["runs"]):
        summary = run.get("summary") or []
        if not isinstance(summary, list):
            raise InputError(f'runs[{i}].summary: expected a list', fmt="json")
        for j, s in enumerate(summary):
            missing = [k for k in required if not isinstance(s, dict) or k not in s]
            if missing:
                raise InputError(f"runs[{i}].summary[{j}] has no {missing[0]!r}", fmt="json")
            if not isinstance(s.get("metrics", {}), dict):
                raise InputError(f"runs[{i}].summary[{j}].metrics: expected an object",
                                 fmt="json")


# ---------------------------------------------------------------- msgbench documents


def from_document(doc: dict, name: str, fmt: str = "json") -> dict:
    graphs = []
    for data in model.collect(doc, workloads.order):
        graphs += workloads.plugin(data.workload).page_graphs(data)
        graphs += _scenario_graphs(data)
    for graph in graphs:  # one colour per target, as in the report (figures.style)
        figures.style(graph["series"])
    return {"name": name, "format": FORMATS[fmt], "graphs": graphs}


def _scenario_graphs(data: model.WorkloadData) -> list[dict]:
    """Every other metric of every scenario: against the swept param, or per scenario."""
    plugin = workloads.plugin(data.workload)
    skip = plugin.page_skips
    graphs = []
    for (scenario, sweep, fixed), entries in model.scenario_groups(data.entries).items():
        x_of = None if sweep else (lambda e: e.summary["scenario"])
        primary = plugin.primary(entries[0].params) or data.primary_metric
        for metric in model.metric_names(entries):
            if metric in skip:
                continue
            graphs.append({
                "key": "|".join((data.workload, scenario, sweep or "", fixed, metric)),
                "title": f"{scenario}: {figures.metric_label(metric)}",
                "subtitle": model.describe_params(json.loads(fixed)),
                "x_label": sweep or "scenario", "y_label": figures.metric_label(metric),
                "better": data.better(metric), "primary": metric == primary,
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
