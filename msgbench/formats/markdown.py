"""A run as Markdown: metadata, notes, and the summary table.

Every string from a run is escaped (tables.md_text, md_cell, md_code): a label or a
note holding HTML or a `|` must neither render as HTML nor break the table.
"""

from msgbench import tables
from msgbench.tables import md_code, md_text


def render(doc: dict) -> str:
    parts = []
    for run in doc["runs"]:
        meta = run["metadata"]
        parts.append(f"# msgbench run {md_text(run['id'])}\n")
        parts.append(f"- command: {md_code(run['command'])}")
        parts.append(f"- status: {md_text(run['status'])}, started {md_text(run['created_at'])}")
        memory = meta.get("memory_bytes") if isinstance(meta.get("memory_bytes"), (int, float)) else 0
        parts.append(f"- machine: {md_text(meta.get('cpu_model'))}, {md_text(meta.get('cores'))} cores, "
                     f"{memory / 2**30:.1f} GiB, {md_text(meta.get('kernel'))}")
        for name, version in sorted((meta.get("runtimes") or {}).items()):
            parts.append(f"- {md_text(name)}: {md_text(version)}")
        parts.append(f"- msgbench revision: {md_text(meta.get('git_revision'))}")
        for note in run["notes"]:
            parts.append(f"- note: {md_text(note)}")
        headers, rows = tables.summary_rows(run["summary"])
        parts.append("\n" + tables.render(headers, rows, markdown=True) + "\n")
        warnings = [md_text(f"- {s['target']}/{s['variant']} {s['scenario']}"
                            f"{' ' + s['sweep'] + '=' + str(s['x']) if s['sweep'] else ''}: {w}")
                    for s in run["summary"] for w in s["warnings"]]
        if warnings:
            parts.append("## Warnings\n\n" + "\n".join(warnings) + "\n")
    return "\n".join(parts)
