"""The limits section: each ceiling against the machine limit it is compared with.

rows(doc) gives the data (one dict per ceiling point); section(doc) a minimal table of
them, or None when the document has no limits or no ceiling. The limits are the ones in
the run's metadata (msgbench run --limits), else the newest in the document (a
`msgbench limits` run exported with it). docs/limits.md says why each pairing.
"""

from msgbench.data.points import target_label, value_text
from msgbench.views import figures, workloads


def _ceilings(s: dict, limits: dict) -> list[tuple[str, float, str, float, str]]:
    """(ceiling, its value, machine limit's name, its value, unit) for one summary: its workload's view
    plug-in says which of its figures a machine limit bounds (Plugin.ceilings)."""
    metrics, params = s.get("metrics") or {}, s.get("params") or {}

    def median(name: str) -> float | None:
        value = (metrics.get(name) or {}).get("median")
        return value if isinstance(value, (int, float)) and value > 0 else None

    return workloads.plugin(str(s.get("workload"))).ceilings(s | {"params": params}, median, limits)


def rows(doc: dict) -> list[dict]:
    runs = [r for r in doc.get("runs") or [] if isinstance(r, dict)]
    measured = [(r.get("metadata") or {}).get("limits") for r in runs]
    measured = [m for m in measured if isinstance(m, dict)]
    fallback = max(measured, key=lambda m: str(m.get("measured_at", "")), default=None)
    out = []
    for run in runs:
        limits = (run.get("metadata") or {}).get("limits") or fallback
        if not limits:
            continue
        for s in run.get("summary") or []:
            if s.get("status") != "ok":
                continue
            point = ", ".join(f"{k}={value_text(v)}" for k, v in (s.get("params") or {}).items()
                              if s.get("sweep") == k or k in ("mode", "payload_bytes", "size", "senders"))
            for ceiling, value, limit_name, limit, unit in _ceilings(s, limits):
                out.append({"run": run.get("id"), "ceiling": ceiling, "target": target_label(s),
                            "point": point, "value": value, "limit_name": limit_name, "limit": limit,
                            "unit": unit, "fraction": value / limit, "command": limits.get("command", "")})
    return out


def fraction_text(fraction: float) -> str:
    """62% of the limit; a ceiling far past its yardstick as a multiple (65x), not 6500%."""
    return f"{100 * fraction:.0f}%" if fraction < 2 else f"{fraction:.0f}x"


def section(doc: dict) -> dict | None:
    found = rows(doc)
    if not found:
        return None
    table_rows = [[figures.cell(r["ceiling"]), figures.cell(r["target"]), figures.cell(r["point"]),
                   figures.cell(f"{figures.format_value(r['value'])} {r['unit']}"),
                   figures.cell(f"{r['limit_name']}: {figures.format_value(r['limit'])} {r['unit']}"),
                   figures.cell(fraction_text(r["fraction"])), figures.cell(r["command"])]
                  for r in found]
    table = figures.table("limits-1", "Ceilings against the machine's limits",
                          ["ceiling", "target", "point", "measured (median)", "machine limit",
                           "fraction of the limit", "limit measured by"], table_rows,
                          note="limits from msgbench limits (docs/limits.md); a fraction above 100% "
                               "means the ceiling beats that yardstick (e.g. a queue that needs no wake-up)")
    return {"id": "limits", "workload": "limits", "title": "limits: ceilings against the machine",
            "description": "", "seed": "", "items": [table], "summary_table": None}
