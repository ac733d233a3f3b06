"""A run as Markdown: metadata, notes, and the summary table."""

from msgbench import tables


def render(doc: dict) -> str:
    parts = []
    for run in doc["runs"]:
        meta = run["metadata"]
        parts.append(f"# msgbench run {run['id']}\n")
        parts.append(f"- command: `{run['command']}`")
        parts.append(f"- status: {run['status']}, started {run['created_at']}")
        parts.append(f"- machine: {meta.get('cpu_model')}, {meta.get('cores')} cores, "
                     f"{(meta.get('memory_bytes') or 0) / 2**30:.1f} GiB, {meta.get('kernel')}")
        for name, version in sorted(meta.get("runtimes", {}).items()):
            parts.append(f"- {name}: {version}")
        parts.append(f"- msgbench revision: {meta.get('git_revision')}")
        for note in run["notes"]:
            parts.append(f"- note: {note}")
        headers, rows = tables.summary_rows(run["summary"])
        parts.append("\n" + tables.render(headers, rows, markdown=True) + "\n")
        warnings = [f"- {s['target']}/{s['variant']} {s['scenario']}"
                    f"{' ' + s['sweep'] + '=' + str(s['x']) if s['sweep'] else ''}: {w}"
                    for s in run["summary"] for w in s["warnings"]]
        if warnings:
            parts.append("## Warnings\n\n" + "\n".join(warnings) + "\n")
    return "\n".join(parts)
