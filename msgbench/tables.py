"""Tables for the terminal (drawn by rich) and Markdown.

On a terminal a table fits its width (rich shrinks and wraps the columns) and marks
rows in colour; anywhere else (a pipe, a log, a test) it is plain text at its natural
width, one line per row, so that grep and diff keep working.
"""

import html
import io
import re
import sys
from dataclasses import dataclass, field

from rich import box
from rich.console import Console
from rich.table import Table as RichTable
from rich.text import Text

from msgbench import spec, terminal, units
from msgbench.points import canonical

human = units.number  # a number people can read at a glance: 12.3M, 456k, 7.89, 0.0123


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


@dataclass
class Table:
    """A table for the terminal: a title, headers, rows of text, and how each row reads
    (a style name per row: "", "warn", "bad" or "dim"; colour only on a terminal).
    wrap: the columns that may wrap on a narrow terminal (by words: a scenario's name);
    the others (a point, a label, a figure) stay whole, or are cut with an ellipsis
    when even that is not enough. None: every column may wrap."""
    headers: list[str]
    rows: list[list[str]]
    title: str = ""
    styles: list[str] = field(default_factory=list)
    wrap: set[str] | None = None


_STYLES = {"warn": "yellow", "bad": "bold red", "dim": "dim"}


def rich_table(table: Table) -> RichTable:
    """The table as rich draws it: columns shrink and wrap to fit the terminal's width.
    (The title is a line of its own: as rich's title it would wrap at the table's width.)"""
    drawn = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                      header_style="bold")
    for index, header in enumerate(table.headers):
        if table.wrap is None or header in table.wrap:
            # Never narrower than its longest word: a column may wrap, not vanish.
            words = [w for cell in [header, *(row[index] for row in table.rows)] for w in str(cell).split()]
            drawn.add_column(header, overflow="fold", min_width=max(map(len, words), default=1))
        else:
            drawn.add_column(header, no_wrap=True, overflow="ellipsis")
    for index, row in enumerate(table.rows):
        style = table.styles[index] if index < len(table.styles) else ""
        drawn.add_row(*(Text(terminal.safe(str(c))) for c in row), style=_STYLES.get(style))
    return drawn


def write(table: Table, stream=None) -> None:
    """Print the table: fitted to the terminal and coloured there, plain text elsewhere."""
    stream = stream or sys.stdout
    raw = terminal.raw(stream)
    if raw.isatty():
        # rich writes its own colour codes, around the control-sequence filter; the
        # cells went through terminal.safe() above.
        console = Console(file=raw, highlight=False, markup=False, emoji=False)
        if table.title:
            console.print(Text(terminal.safe(table.title), style="bold"))
        console.print(rich_table(table))
    else:
        stream.write(text(table) + "\n")


def text(table: Table) -> str:
    """The table as plain text at its natural width: no colour, no control sequence, no
    trailing blanks; what pipes, logs and tests read."""
    out = io.StringIO()
    Console(file=out, width=_UNWRAPPED, color_system=None, force_terminal=False, highlight=False,
            markup=False, emoji=False).print(rich_table(table))
    lines = [line.rstrip() for line in out.getvalue().rstrip("\n").splitlines()]
    return "\n".join(([terminal.safe(table.title)] if table.title else []) + lines)


_UNWRAPPED = 1000  # columns: a line only a table this wide would wrap


def render(headers: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(map(md_cell, headers)) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(md_cell(str(c)) for c in row) + " |" for row in rows]
        return "\n".join(lines)
    return text(Table(headers, rows))


def reference_metrics(summary: list[dict], metric_of=None) -> dict[tuple, dict]:
    """The reference tools' summary of a metric (metric_of(summary); the primary one by
    default: its median, and its repetitions' values where the summary has them), per
    scenario, parameters and the target it measures (None: every target, e.g. iperf3 for
    all runtimes' sockets)."""
    found = {}
    for key, s in _reference_tools(summary):
        metric = metric_of(s) if metric_of else spec.workload(s["workload"]).primary_metric
        if metric in s["metrics"]:
            found[key] = s["metrics"][metric]
    return found


def _reference_tools(summary: list[dict]):
    """(scenario, parameters, what it measures) and the summary of each reference tool that
    succeeded: what it measures is a target ("redis"), a variant ("c/tuned"), or None (every
    target), as its reference_for says."""
    for s in summary:
        if s.get("variant_label") == "reference" and s["status"] == "ok":
            point = (s["scenario"], canonical(s["params"]))
            for measured in s.get("reference_for") or [None]:
                yield (*point, measured), s


def reference_pairings(summary: list[dict]) -> dict[str, list[str]]:
    """Which reference tool each target's "x reference" ratio is against ("reference/nats_bench"),
    by the rule of reference_metrics: at a point, the last reference tool stored for that target
    wins (redis: redis_benchmark_sub, the fair pairing, over redis_benchmark); None: every target."""
    by_point = {key: f"{s['target']}/{s['variant']}" for key, s in _reference_tools(summary)}
    found: dict[str, list[str]] = {}
    for (*_, measured), label in by_point.items():
        found.setdefault(measured, [])
        if label not in found[measured]:
            found[measured].append(label)
    return found


def reference_for(references: dict[tuple, dict], s: dict) -> dict | None:
    """The reference for s's variant (reference_for "c/tuned"), else its target's, else everyone's."""
    point = (s["scenario"], canonical(s["params"]))
    for measured in (f"{s['target']}/{s.get('variant')}", s["target"], None):
        if (*point, measured) in references:
            return references[(*point, measured)]
    return None
