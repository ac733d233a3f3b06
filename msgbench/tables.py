"""Plain-text tables for the terminal and Markdown."""

import html
import re

from msgbench import spec
from msgbench.points import canonical, target_label


def human(value: float | None) -> str:
    """A number people can read at a glance: 12.3M, 456k, 7.89, 0.0123."""
    if value is None:
        return "-"
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def md_text(text: str) -> str:
    """Text from a run, safe in Markdown: no HTML from it is ever rendered as HTML."""
    return html.escape(str(text), quote=False).replace("\r", " ").replace("\n", " ")


def md_cell(text: str) -> str:
    """md_text that cannot end a table cell either."""
    return md_text(text).replace("|", "\\|")


def md_code(text: str) -> str:
    """Text as a Markdown code span, however many backticks it holds."""
    text = str(text).replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall("`+", text)), default=0) + 1)
    return f"{fence} {text} {fence}" if "`" in text else f"`{text}`"


def render(headers: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(map(md_cell, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(md_cell(str(c)) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def reference_medians(summary: list[dict]) -> dict[tuple, float]:
    """The reference tools' median of the primary metric, per scenario, parameters and the
    target it measures (None: every target, e.g. iperf3 for all runtimes' sockets)."""
    found = {}
    for s in summary:
        if s.get("variant_label") == "reference" and s["status"] == "ok":
            metric = spec.workload(s["workload"]).primary_metric
            if metric in s["metrics"]:
                point = (s["scenario"], canonical(s["params"]))
                for measured in s.get("reference_for") or [None]:  # the variant's, in its summary
                    found[(*point, measured)] = s["metrics"][metric]["median"]
    return found


def reference_for(references: dict[tuple, float], s: dict) -> float | None:
    point = (s["scenario"], canonical(s["params"]))
    return references.get((*point, s["target"]), references.get((*point, None)))


def summary_rows(summary: list[dict]) -> tuple[list[str], list[list[str]]]:
    """One row per point: the workload's primary metric with its spread (and vs the reference)."""
    headers = ["scenario", "x", "target/variant", "status", "metric", "median", "min", "max", "cv", "n"]
    references = reference_medians(summary)
    if references:
        headers.append("x reference")
    rows = []
    for s in summary:
        metric = spec.workload(s["workload"]).primary_metric if s["workload"] in spec.workloads() else ""
        stats = s["metrics"].get(metric)
        reference = reference_for(references, s)
        x = f"{s['sweep']}={s['x']}" if s.get("sweep") else ""
        status = s["status"] if s["status"] != "ok" else ("ok" if not s["warnings"] else "ok*")
        shown = "n/a" if s["status"] == "unsupported" else ("FAILED" if s["status"] != "ok" else "")
        if stats:
            rows.append([s["scenario"], x, target_label(s), status, metric,
                         human(stats["median"]), human(stats["min"]), human(stats["max"]),
                         f"{stats['cv']:.1%}", f"{stats['n']}"])
            if references:
                rows[-1].append(f"{stats['median'] / reference:.2f}x" if reference else "")
        else:
            rows.append([s["scenario"], x, target_label(s), status, metric,
                         shown or "-", "", "", "", f"{s['ok']}/{s['total']}"])
            if references:
                rows[-1].append("")
    return headers, rows
