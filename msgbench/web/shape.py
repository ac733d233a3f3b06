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

from msgbench import jsonio, results
from msgbench.formats import csvfmt, otp
from msgbench.report import figures, model

FORMATS = {"json": "msgbench-json", "csv": "csv", "otp": "otp"}
OTP_AXES = {"x_label": "# of Processes", "y_label": "Operations/Second", "better": "higher",
            "x_ticks": "data"}


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
    """A source from pasted text in any of the three formats."""
    body = text.lstrip("\ufeff")
    if not body.strip():
        raise InputError("the input is empty", line=1, column=1)
    first = body.lstrip()[0]
    head = next((line.strip() for line in body.splitlines() if line.strip()), "")
    if first in "{[":
        return from_document(_load_json(body), name, "json")
    if head.startswith("run_id,") or head.startswith('"run_id"'):
        try:
            doc = csvfmt.parse(body)
        except csvfmt.ParseError as err:
            raise InputError(err.reason, line=err.line, column=err.column, fmt="csv") from None
        return from_document(doc, name, "csv")
    if "Scenario:" in body or "#BENCHMARK" in body.upper():
        try:
            graphs = otp.parse(body)
        except otp.ParseError as err:
            raise InputError(err.reason, line=err.line, column=err.column, fmt="otp") from None
        return from_otp(graphs, name)
    raise InputError("cannot tell the format: expected a msgbench JSON document (starting "
                     "with '{'), a msgbench CSV export (a header starting 'run_id,'), or "
                     "Erlang/OTP benchmark output ('Scenario: ...$' lines)", line=1, column=1)


def _load_json(text: str) -> dict:
    try:
        doc = json.loads(text, parse_constant=jsonio.refuse_constant, parse_float=jsonio.finite_float)
    except json.JSONDecodeError as err:
        raise InputError(f"invalid JSON: {err.msg}", line=err.lineno, column=err.colno,
                         fmt="json") from None
    except (jsonio.JSONError, RecursionError) as err:
        reason = str(err) if isinstance(err, jsonio.JSONError) else "nested too deeply"
        raise InputError(f"invalid JSON: {reason}", fmt="json") from None
    try:
        results.check_document(doc, "the document")
    except results.DocumentError as err:
        raise InputError(str(err), fmt="json") from None
    _check_summaries(doc)
    return doc


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
    for data in model.collect(doc):
        if data.workload == "fanin":
            graphs += _fanin_graphs(data)
        graphs += _scenario_graphs(data)
    return {"name": name, "format": FORMATS[fmt], "graphs": graphs}


def _fanin_graphs(data: model.WorkloadData) -> list[dict]:
    """Send and receive throughput per scenario, keyed like the OTP page's graphs."""
    scenarios = model.group_by(data.entries, lambda e: otp.scenario_key(e.summary))
    graphs = []
    for entries, extra in zip(scenarios.values(), otp.title_extras(scenarios), strict=True):
        subtitle = model.describe_params(extra)
        for kind, title in otp.titles(entries[0].summary).items():
            series = model.series_traces(data, entries, otp.METRICS[kind],
                                         x_of=lambda e: e.params.get("senders"))
            graphs.append({"key": "otp|" + otp.graph_key(title) + ("|" + subtitle if extra else ""),
                           "title": title, "subtitle": subtitle, "primary": True,
                           "series": series, **OTP_AXES})
    return graphs


def _scenario_graphs(data: model.WorkloadData) -> list[dict]:
    """Every other metric of every scenario: against the swept param, or per scenario."""
    skip = set(otp.METRICS.values()) if data.workload == "fanin" else set()
    graphs = []
    for (scenario, sweep, fixed), entries in model.scenario_groups(data.entries).items():
        x_of = None if sweep else (lambda e: e.summary["scenario"])
        for metric in model.metric_names(entries):
            if metric in skip:
                continue
            graphs.append({
                "key": "|".join((data.workload, scenario, sweep or "", fixed, metric)),
                "title": f"{scenario}: {figures.metric_label(metric)}",
                "subtitle": model.describe_params(json.loads(fixed)),
                "x_label": sweep or "scenario", "y_label": figures.metric_label(metric),
                "better": data.better(metric), "primary": metric == data.primary_metric,
                "x_ticks": "auto",
                "series": model.series_traces(data, entries, metric, x_of=x_of),
            })
    return graphs


# ---------------------------------------------------------------- OTP text


def from_otp(graphs: list[dict], name: str) -> dict:
    shaped = []
    for graph in graphs:
        series = []
        for row in graph["rows"]:
            points = [model.Point(x, v, status=s) for x, v, s in
                      zip(graph["x"], row["values"], row["status"], strict=True)]
            series.append(model.trace(row["label"], points))
        shaped.append({"key": "otp|" + otp.graph_key(graph["title"]), "title": graph["title"],
                       "subtitle": "", "primary": True, "series": series, **OTP_AXES})
    return {"name": name, "format": "otp", "graphs": shaped}
