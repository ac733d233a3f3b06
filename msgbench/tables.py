"""Plain-text tables for the terminal and Markdown."""

from msgbench import spec


def human(value: float | None) -> str:
    """A number people can read at a glance: 12.3M, 456k, 7.89, 0.0123."""
    if value is None:
        return "-"
    magnitude = abs(value)
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if magnitude >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.3g}"


def render(headers: list[str], rows: list[list[str]], markdown: bool = False) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(row) + " |" for row in rows]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in column) for column in zip(headers, *rows, strict=True)]
    def line(cells):
        return "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def summary_rows(summary: list[dict]) -> tuple[list[str], list[list[str]]]:
    """One row per point: the workload's primary metric with its spread."""
    headers = ["scenario", "x", "target/variant", "status", "metric", "median", "min", "max", "cv", "n"]
    rows = []
    for s in summary:
        metric = spec.workload(s["workload"]).primary_metric if s["workload"] in spec.workloads() else ""
        stats = s["metrics"].get(metric)
        x = f"{s['sweep']}={s['x']}" if s.get("sweep") else ""
        status = s["status"] if s["status"] != "ok" else ("ok" if not s["warnings"] else "ok*")
        shown = "n/a" if s["status"] == "unsupported" else ("FAILED" if s["status"] != "ok" else "")
        if stats:
            rows.append([s["scenario"], x, f"{s['target']}/{s['variant']}", status, metric,
                         human(stats["median"]), human(stats["min"]), human(stats["max"]),
                         f"{stats['cv']:.1%}", f"{stats['n']}"])
        else:
            rows.append([s["scenario"], x, f"{s['target']}/{s['variant']}", status, metric,
                         shown or "-", "", "", "", f"{s['ok']}/{s['total']}"])
    return headers, rows
