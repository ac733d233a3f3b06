"""A run as Markdown: metadata, notes, and the summary table.

Every string from a run is escaped (tables.md_text, md_cell, md_code): a label or a
note holding HTML or a `|` must neither render as HTML nor break the table.

The whole results document follows in an HTML comment, which Markdown renderers do not
show, so that Markdown pasted into an issue or a wiki can be imported again whole
(`msgbench import`, the results page); `show --format md` leaves it out. In it `<`,
`>` and `&` are written as JSON's \\u003c, \\u003e and \\u0026, so no text of a run
can end the comment.
"""

import re

from msgbench.core import jsonio
from msgbench.data.points import machine_text
from msgbench.hosts import inventory as hosts
from msgbench.views import screen, tables
from msgbench.views.tables import md_code, md_text

EMBED_MARK = "msgbench-results-document"
_EMBEDDED = re.compile(r"<!-- " + EMBED_MARK + r"\n(.*?)\n-->", re.S)


def render(doc: dict, *, embed: bool = True) -> str:
    parts = []
    for run in doc["runs"]:
        meta = run["metadata"]
        parts.append(f"# msgbench run {md_text(run['id'])}\n")
        parts.append(f"- command: {md_code(run['command'])}")
        parts.append(f"- status: {md_text(run['status'])}, started {md_text(run['created_at'])}")
        parts.append(f"- machine: {md_text(machine_text(meta))}")
        for name, version in sorted((meta.get("runtimes") or {}).items()):
            parts.append(f"- {md_text(name)}: {md_text(version)}")
        for alias, line in hosts.describe(meta.get("hosts")):
            parts.append(f"- host {md_text(alias)}: {md_text(line)}")
        parts.append(f"- msgbench revision: {md_text(meta.get('git_revision') or 'unknown')}")
        for note in run["notes"]:
            parts.append(f"- note: {md_text(note)}")
        parts += [f"- {md_text(line)}" for line in screen.method_lines(run)]
        # As the terminal shows it: a table per headline (socket echo's round trip, ...).
        for table in screen.summary_tables(run["summary"], scenarios=True):
            parts.append(f"\n### {md_text(table.title)}\n\n" + tables.render(table.headers, table.rows, markdown=True))
        legend = screen.legend(run["summary"])
        if legend:
            parts.append("\n" + md_text(legend))
        parts.append("")
        warnings = [f"- {md_text(line)}" for line in screen.all_warnings(run)]  # most serious first
        if warnings:
            parts.append("## Warnings\n\n" + "\n".join(warnings) + "\n")
    if embed:
        parts.append(f"<!-- {EMBED_MARK}\n{_comment_safe(jsonio.dumps(doc))}\n-->\n")
    return "\n".join(parts)


def _comment_safe(text: str) -> str:
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def embedded_documents(text: str) -> list[str]:
    """Every JSON document embedded as render() embeds one: a file render() wrote holds
    one; more is a file whose readers could disagree on which it is."""
    return _EMBEDDED.findall(text)
