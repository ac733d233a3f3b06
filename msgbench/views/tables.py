"""Tables for the terminal (drawn by rich) and Markdown.

On a terminal a table fits its width by choosing columns, never by cutting a number:
prose columns (`wrap`) wrap by words, then the table's `optional` columns are left out
one by one (and a line says which) until it fits; a table that fits in no way is
printed whole, for the terminal to wrap its lines. `--wide` (write(wide=True)) shows
every column, whole, whatever the width. Rows are marked in colour there; anywhere else
(a pipe, a log, a test) a table is plain text at its natural width, one line per row,
so that grep and diff keep working.
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

from msgbench.core import spec, terminal, units
from msgbench.data.points import canonical

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
    # Headers a narrow terminal may leave out, the first first (a spread before a figure).
    optional: tuple[str, ...] = ()

    def without(self, headers: list[str]) -> "Table":
        """The table without those columns."""
        keep = [i for i, h in enumerate(self.headers) if h not in headers]
        return Table([self.headers[i] for i in keep], [[row[i] for i in keep] for row in self.rows],
                     self.title, self.styles, self.wrap, tuple(h for h in self.optional if h not in headers))


MAX_WORD = 20  # a wrapping column's narrowest: a long label (mix=50%exit_signal:10+...) folds
_STYLES = {"warn": "yellow", "bad": "bold red", "dim": "dim"}


def rich_table(table: Table, widths: list[int] | None = None) -> RichTable:
    """The table as rich draws it; widths: each column's, as column_widths() fits them to a
    terminal (rich's own shrinking cuts figures short). (The title is a line of its own: as
    rich's title it would wrap at the table's width.)"""
    drawn = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                      header_style="bold")
    for index, header in enumerate(table.headers):
        width = widths[index] if widths else None
        if _wraps(table, header):
            drawn.add_column(header, overflow="fold", width=width)
        else:
            drawn.add_column(header, no_wrap=True, overflow="ellipsis", width=width)
    for index, row in enumerate(table.rows):
        style = table.styles[index] if index < len(table.styles) else ""
        drawn.add_row(*(Text(terminal.safe(str(c))) for c in row), style=_STYLES.get(style))
    return drawn


def _wraps(table: Table, header: str) -> bool:
    return table.wrap is None or header in table.wrap


def column_widths(table: Table, width: int) -> list[int] | None:
    """Each column's width for the table to fit width: a column that does not wrap (a
    figure, a label) whole; a wrapping one (prose) at least its longest word (up to
    MAX_WORD: a longer label folds), the room left shared among them as they need it.
    None when even that does not fit."""
    columns = [[str(c) for c in [h, *(row[i] for row in table.rows)]] for i, h in enumerate(table.headers)]
    full = [max(map(len, cells)) for cells in columns]
    gaps = _natural(table) - sum(full)
    widths = [min(max((len(w) for c in cells for w in c.split()), default=1), MAX_WORD)
              if _wraps(table, table.headers[i]) else full[i] for i, cells in enumerate(columns)]
    room = width - gaps - sum(widths)
    if room < 0:
        return None
    while room > 0:  # a column at a time, to the one with the smallest share of its full width
        i = min(range(len(widths)), key=lambda k: widths[k] / full[k])
        if full[i] <= widths[i]:
            break
        widths[i] += 1
        room -= 1
    return widths


def write(table: Table, stream=None, wide: bool = False) -> None:
    """Print the table: fitted to the terminal (fit) and coloured there, plain text
    elsewhere; wide: every column, whole, however wide the terminal."""
    stream = stream or sys.stdout
    raw = terminal.raw(stream)
    if raw.isatty():
        # rich writes its own colour codes, around the control-sequence filter; the
        # cells went through terminal.safe() above.
        console = Console(file=raw, highlight=False, markup=False, emoji=False)
        shown, dropped = (table, []) if wide else fit(table, console.width)
        widths = column_widths(shown, console.width)
        if widths is None:  # printed whole (--wide, or nothing fits): the terminal wraps its lines
            console = Console(file=raw, highlight=False, markup=False, emoji=False,
                              width=max(console.width, _natural(shown)))
        if table.title:
            console.print(Text(terminal.safe(table.title), style="bold"))
        console.print(rich_table(shown, widths))
        if dropped:
            console.print(Text(f"({', '.join(dropped)} left out to fit {console.width} columns"
                               + ("; --wide shows every column)" if "cv" in table.optional else ")"),
                               style="dim"))
    else:
        stream.write(text(table) + "\n")


def fit(table: Table, width: int) -> tuple[Table, list[str]]:
    """The table with as few optional columns left out as it takes to fit width without
    cutting a figure; and the headers left out. The fewest columns when nothing fits."""
    dropped: list[str] = []
    shown = table
    for header in table.optional:
        if column_widths(shown, width) is not None:
            break
        dropped.append(header)
        shown = table.without(dropped)
    return shown, dropped


def _natural(table: Table) -> int:
    """The table's width with every cell on one line."""
    return max((len(line) for line in text(Table(table.headers, table.rows)).splitlines()), default=1)


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
