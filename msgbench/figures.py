"""Figure and table descriptions: plain JSON-ready dicts.

The same description is drawn by the browser (static/plot.js) and by matplotlib
(png.py), so the two never disagree about what a picture shows. The shapes:

- xy: {"kind": "xy", "id", "title", "subtitle", "note", "bars",
       "x": {"label", "scale"}, "y": {"label", "scale"}, "y2": axis or None,
       "traces": [model.trace(...)]}
  scale is "linear", "log" or "category" (x only: points evenly spaced, in order).
- heatmap: {"kind": "heatmap", "id", "title", "subtitle", "note",
            "x": {"label", "values"}, "y": {"label", "values"}, "z_label", "scale",
            "z": [[value or None per x] per y], "status": [[status per x] per y]}
- table: {"kind": "table", "id", "title", "columns": [...], "rows": [[cell, ...]]},
  a cell being {"text": str, "status": str}; status "ok" unless the cell is n/a or failed.
"""

import math
import re

# Data spanning this ratio (two decades) or more is drawn on a log axis.
LOG_SPAN = 100.0

_UNITS = (
    ("_per_s", "/s"), ("_bytes", "bytes"), ("_ms", "ms"), ("_us", "µs"), ("_s", "s"),
    ("_bits", "bits"), ("_percent", "%"),
)


def auto_scale(values) -> str:
    """log when every value is positive and they span two decades or more."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numbers or min(numbers) <= 0:
        return "linear"
    return "log" if max(numbers) / min(numbers) >= LOG_SPAN else "linear"


def metric_label(metric: str) -> str:
    """hops_per_s -> "hops (/s)", pass_wall_ms -> "pass wall (ms)"."""
    for suffix, unit in _UNITS:
        if metric.endswith(suffix):
            return f"{metric[: -len(suffix)].replace('_', ' ')} ({unit})"
    return metric.replace("_", " ")


def format_value(value: float | None) -> str:
    """Table numbers: thousands separators for big ones, three significant digits else."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def status_text(status: str) -> str:
    """How a point without a number is written: n/a by nature, else failed."""
    if status == "unsupported":
        return "n/a"
    if status == "missing":
        return "—"
    return "failed" if status in ("failed", "error") else f"failed ({status})"


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "figure"


class Ids:
    """Figure ids unique in one report: the section's slug and a counter."""

    def __init__(self, prefix: str):
        self.prefix = slug(prefix)
        self.count = 0

    def next(self) -> str:
        self.count += 1
        return f"{self.prefix}-{self.count}"


def xy(fig_id: str, title: str, *, x_label: str, y_label: str, traces: list[dict],
       subtitle: str = "", note: str = "", x_scale: str | None = None,
       y_scale: str | None = None, y2_label: str | None = None, bars: bool = False,
       x_ticks_at_data: bool = False) -> dict:
    """A line (or bar) chart; axis scales default to auto_scale over the data.

    x_ticks_at_data puts the x ticks at the measured x values (1, 2, 4, 8, 16 senders).
    """
    def values(axis: str) -> list:
        return [v for t in traces if t.get("axis", "y") == axis for v in t["y"]]

    xs = [x for t in traces for x in t["x"]]
    if x_scale is None:
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
        x_scale = auto_scale(xs) if numeric and xs else "category"
    y2 = None
    if y2_label is not None:
        y2 = {"label": y2_label, "scale": auto_scale(values("y2"))}
    return {
        "kind": "xy", "id": fig_id, "title": title, "subtitle": subtitle, "note": note,
        "bars": bars,
        "x": {"label": x_label, "scale": x_scale, "ticks": "data" if x_ticks_at_data else "auto"},
        "y": {"label": y_label, "scale": y_scale or auto_scale(values("y"))},
        "y2": y2,
        "traces": traces,
    }


def heatmap(fig_id: str, title: str, *, x_label: str, x_values: list, y_label: str,
            y_values: list, z: list[list], status: list[list], z_label: str,
            subtitle: str = "", note: str = "", z_range: tuple | None = None) -> dict:
    """z_range: the colour scale's (low, high), shared by heatmaps meant to be compared."""
    values = [v for row in z for v in row if v is not None]
    return {
        "kind": "heatmap", "id": fig_id, "title": title, "subtitle": subtitle, "note": note,
        "x": {"label": x_label, "values": x_values},
        "y": {"label": y_label, "values": y_values},
        "z": z, "status": status, "z_label": z_label,
        "z_range": list(z_range) if z_range else None,
        "scale": auto_scale(list(z_range) if z_range else values),
    }


def cell(text: str, status: str = "ok") -> dict:
    return {"text": text, "status": status}


def value_cell(point) -> dict:
    """A table cell for a model.Point: its number, or n/a / failed."""
    if point.status == "ok":
        return cell(format_value(point.y))
    return cell(status_text(point.status), point.status)


def table(fig_id: str, title: str, columns: list[str], rows: list[list[dict]],
          note: str = "") -> dict:
    return {"kind": "table", "id": fig_id, "title": title, "columns": columns, "rows": rows,
            "note": note}
