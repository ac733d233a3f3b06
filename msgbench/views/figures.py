"""Figure and table descriptions: plain JSON-ready dicts.

The same description is drawn by the browser (static/plot.js) and by matplotlib
(png.py), so the two never disagree about what a picture shows. The shapes:

- xy: {"kind": "xy", "id", "title", "subtitle", "note", "bars",
       "x": {"label", "scale"}, "y": {"label", "scale"}, "y2": axis or None,
       "traces": [model.trace(...)], "sources": [source, ...]}
  scale is "linear", "log", "category" (x only: points evenly spaced, in order) or
  "series" (x only, a chart of one x value: a category per trace's "series", the
  traces of one series side by side); a y axis may say "format": "percent" and
  "range": [lo, hi] (facets of one chart share it). A reference tool's trace says
  which system it "measures". style() gives every trace its "colour" (its
  target's, shaded per member), "marker" and "line" (per source: run or build), which
  both renderers draw as they are; "sources" heads the legend's groups.
- heatmap: {"kind": "heatmap", "id", "title", "subtitle", "note",
            "x": {"label", "values"}, "y": {"label", "values"}, "z_label", "scale",
            "z": [[value or None per x] per y], "status": [[status per x] per y]}
- table: {"kind": "table", "id", "title", "columns": [...], "rows": [[cell, ...]]},
  a cell being {"text": str, "status": str}; status "ok" unless the cell is n/a or failed.
"""

import hashlib
import math
import re

# Values spanning this ratio (a decade) or more are drawn on a log y axis: on a linear
# one, redis's 3k msg/s beside tcp's 600k sits on zero (issue 29).
LOG_SPAN = 10.0
# An x axis (senders 1..64, the OTP page's linear axis) turns log only past two decades.
X_LOG_SPAN = 100.0
# The most series one chart holds before it is split into facets: past about 8 the
# shades of a target's colour can no longer be told apart in a legend.
MAX_SERIES = 8

_UNITS = (
    ("_per_s", "/s"), ("_bytes", "bytes"), ("_ms", "ms"), ("_us", "µs"), ("_s", "s"),
    ("_bits", "bits"), ("_percent", "%"),
)


def auto_scale(values, span: float = LOG_SPAN) -> str:
    """log when every value is positive and they span `span` (a decade) or more."""
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if not numbers or min(numbers) <= 0:
        return "linear"
    return "log" if max(numbers) / min(numbers) >= span else "linear"


# ---------------------------------------------------------------- colours and marks
#
# One colour per target in every picture msgbench draws (report, PNG, results page,
# every report): the known targets take fixed places in Tableau's palettes, any other
# target a colour picked by a hash of its name, so no run or report order can move a
# colour. Variants (and whatever else splits a target's traces) are shades of the
# target's colour; runs and builds ("sources") differ by marker and dash.

KNOWN_TARGETS = ("erlang", "go", "rust", "c", "java", "caf", "ghc",
                 "tcp", "zeromq", "nats", "redis", "mqtt", "rabbitmq")
# Tableau 10 (category10) then three dark hues of Tableau 20b for the 13 known targets.
TARGET_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b",
                  "#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#843c39")
# Unknown targets: Tableau 20b/20c's darker hues, by a stable hash of the name.
OTHER_PALETTE = ("#5254a3", "#8ca252", "#bd9e39", "#ad494a", "#a55194", "#3182bd",
                 "#e6550d", "#31a354", "#756bb1", "#636363")
TARGET_COLOURS = dict(zip(KNOWN_TARGETS, TARGET_PALETTE, strict=True))
# A source's marker and line; the page's plot.js draws the same names.
MARKERS = ("circle", "square", "triangle", "diamond")
# A reference tool (nats bench, redis-benchmark) is drawn in the colour of the system it
# measures, with a marker no system has, so "nats" and "nats's own tool" read as a pair.
REFERENCE_MARKER = "star"
SOURCE_LINES = ("solid", "dotted", "dashdot", "longdash")
# A chart of several metrics per series (chat's sent and received, latency p50, p99,
# max) tells the metrics apart by line, and its sources by marker only.
METRIC_LINES = ("solid", "dashed", "dotted", "dashdot", "longdash")
# x scale of a chart with one x value: a category per series (its "series" name),
# the traces of one series (sent, received) side by side within it.
SERIES_SCALE = "series"
# Shades of a target's colour for its 2nd, 3rd... member: + lighter, - darker.
SHADES = (0.0, 0.45, -0.35, 0.7, -0.55, 0.25)


def target_of(label: str) -> str:
    """erlang@otp25/default -> erlang; a label without a target (an OTP row) is its own."""
    return label.split("/", 1)[0].split("@", 1)[0].strip() or label


def target_colour(target: str) -> str:
    if target in TARGET_COLOURS:
        return TARGET_COLOURS[target]
    digest = hashlib.sha1(target.encode("utf-8")).digest()
    return OTHER_PALETTE[digest[0] % len(OTHER_PALETTE)]


def shade(colour: str, amount: float) -> str:
    """colour mixed towards white (amount > 0) or black (amount < 0)."""
    rgb = [int(colour[i:i + 2], 16) for i in (1, 3, 5)]
    goal = 255 if amount > 0 else 0
    return "#" + "".join(f"{round(c + (goal - c) * abs(amount)):02x}" for c in rgb)


def style(traces: list[dict]) -> list[dict]:
    """Set every trace's colour, marker and line (in place; returned for chaining).

    colour: the target's, shaded per member (variant, split) of that target in this
    chart, members in sorted order so a variant keeps its shade in every chart;
    marker and line: per source (run, build), in order of first appearance — except in
    a chart of several metrics per series, where the line tells the metric (its dash
    index) and the marker alone the source.
    """
    sources: list[str] = []
    members: dict[str, set] = {}
    for t in traces:
        target = t.get("target") or target_of(t["label"])
        t["target"] = target
        if t.get("measures"):  # a reference tool: shaded among the members of what it measures
            target = t["measures"]
        members.setdefault(target, set()).add(t.get("member", ""))
        if t.get("source", "") not in sources and not t.get("fixed"):
            sources.append(t.get("source", ""))
    metrics_split = any(t.get("dash") and not t.get("fixed") for t in traces)
    for t in traces:
        if t.get("fixed"):  # a mark of its own (history's step changes), styled by its maker
            continue
        family = t.get("measures") or t["target"]
        ranked = sorted(members[family], key=lambda m: (m != "default", m))
        shade_at = SHADES[ranked.index(t.get("member", "")) % len(SHADES)]
        t["colour"] = shade(target_colour(family), shade_at) if shade_at else target_colour(family)
        k = sources.index(t.get("source", ""))
        t["marker"] = MARKERS[k % len(MARKERS)]
        if metrics_split and len(sources) == 1:
            # One source: the marker is free to tell the metrics apart too, so sent and
            # received stay distinct where no line joins the points (a one-x chart).
            t["marker"] = MARKERS[int(t.get("dash") or 0) % len(MARKERS)]
        if t.get("measures"):
            t["marker"] = REFERENCE_MARKER
        if metrics_split:
            t["line"] = METRIC_LINES[int(t.get("dash") or 0) % len(METRIC_LINES)]
        else:
            t["line"] = SOURCE_LINES[k % len(SOURCE_LINES)]
    return traces


def sources_of(traces: list[dict]) -> list[str]:
    return list(dict.fromkeys(t.get("source", "") for t in traces if not t.get("fixed")))


# ---------------------------------------------------------------- units
#
# Times are drawn in the unit that keeps their numbers short (µs -> ms -> s): 25,000 µs
# reads worse than 25 ms. The conversion happens here once, so the page, the report
# and the PNGs agree.

_TIME_UNITS = ("ns", "µs", "ms", "s")


def scale_time_axis(label: str, traces: list[dict], axis: str = "y") -> str:
    """Convert the traces of one axis to a larger time unit when their values are big;
    returns the axis label with the unit it now has."""
    match = re.search(r"\((ns|µs|ms|s)\)$", label)
    if not match:
        return label
    unit = match.group(1)
    values = [abs(v) for t in traces if t.get("axis", "y") == axis for v in t["y"]
              if isinstance(v, (int, float))]
    factor = 1.0
    while values and unit != "s" and max(values) / factor >= 10_000:
        factor *= 1000
        unit = _TIME_UNITS[_TIME_UNITS.index(unit) + 1]
    if factor == 1.0:
        return label
    for t in traces:
        if t.get("axis", "y") != axis:
            continue
        for key in ("y", "lo", "hi"):
            t[key] = [v / factor if isinstance(v, (int, float)) else v for v in t[key]]
    return label[: match.start()] + f"({unit})"


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
       x_ticks_at_data: bool = False, keep_colours: bool = False) -> dict:
    """A line (or bar) chart; axis scales default to auto_scale over the data.

    x_ticks_at_data puts the x ticks at the measured x values (1, 2, 4, 8, 16 senders).
    keep_colours: the traces are not targets (a measurement's memory by kind) and bring
    their own colours; marker and dash are still set by source.
    """
    def values(axis: str) -> list:
        return [v for t in traces if t.get("axis", "y") == axis for v in t["y"]]

    colours = [t.get("colour") for t in traces]
    style(traces)
    if keep_colours:
        for t, colour in zip(traces, colours, strict=True):
            t["colour"] = colour or t["colour"]
    y_label = scale_time_axis(y_label, traces)
    if y2_label is not None:
        y2_label = scale_time_axis(y2_label, traces, "y2")
    xs = [x for t in traces for x in t["x"]]
    if x_scale is None:
        numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
        x_scale = auto_scale(xs, X_LOG_SPAN) if numeric and xs else "category"
    if not bars and len(set(map(str, xs))) == 1 and len(traces) > 1:
        # One x value: a line on a wide axis says nothing; a dot per series, side by
        # side, says who is where (the x value moves into the subtitle).
        subtitle = "; ".join(filter(None, [subtitle, f"at {x_label} = {_x_text(xs[0])}"]))
        x_label, x_scale = "", SERIES_SCALE
        for t in traces:
            t.setdefault("series", t["label"])
            if t.get("measures"):  # its star says it is a tool: "nats_bench", not "reference/nats_bench"
                t["series"] = t["series"].replace(f"{t['target']}/", "", 1)
        beside_their_systems(traces)
    y2 = None
    if y2_label is not None:
        y2 = {"label": y2_label, "scale": auto_scale(values("y2"))}
    return {
        "kind": "xy", "id": fig_id, "title": title, "subtitle": subtitle, "note": note,
        "bars": bars, "own_colours": keep_colours,
        "x": {"label": x_label, "scale": x_scale, "ticks": "data" if x_ticks_at_data else "auto"},
        "y": {"label": y_label, "scale": y_scale or auto_scale(values("y"))},
        "y2": y2,
        "traces": traces,
        "sources": sources_of(traces),
    }


def beside_their_systems(traces: list[dict]) -> list[dict]:
    """Order traces (in place) so each reference tool follows the system it measures:
    the pair reads together (nats, nats_bench, redis, redis_benchmark)."""
    family: dict[str, int] = {}
    for t in traces:
        family.setdefault(t.get("measures") or t.get("target") or target_of(t["label"]), len(family))
    traces.sort(key=lambda t: (family[t.get("measures") or t.get("target") or target_of(t["label"])],
                               bool(t.get("measures"))))
    return traces


def _x_text(x) -> str:
    return format_value(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def series_count(item: dict) -> int:
    """How many series a chart draws: its traces less the metrics a series splits into
    (chat's sent and received are one series in two traces)."""
    return len({t.get("series") or t.get("colour_key") or t["label"] for t in item.get("traces") or []
                if not t.get("fixed")})


def facets(item: dict, limit: int = MAX_SERIES) -> list[dict]:
    """An xy chart of more than `limit` series as several charts of at most `limit` each,
    by target: a target's variants stay together, a reference tool stays with the system
    it measures. The facets share one y range, so a point compares across them."""
    if item.get("kind") != "xy" or item.get("own_colours") or series_count(item) <= limit:
        return [item]  # own colours: not targets but a measurement's parts (memory by kind)
    families: dict[str, list[dict]] = {}
    for t in item["traces"]:
        families.setdefault(t.get("measures") or t.get("target") or target_of(t["label"]), []).append(t)
    groups: list[list[dict]] = []
    for traces in families.values():
        chunks = _chunks(traces, limit)
        for chunk in chunks:
            if groups and len(chunks) == 1 and series_count({"traces": groups[-1] + chunk}) <= limit:
                groups[-1] += chunk
            else:
                groups.append(list(chunk))
    values = [v for t in item["traces"] if t.get("axis", "y") == "y"
              for key in ("y", "lo", "hi") for v in t[key] if isinstance(v, (int, float))]
    y_range = [min(values), max(values)] if values else None
    out = []
    for n, traces in enumerate(groups, 1):
        names = ", ".join(dict.fromkeys(t.get("measures") or t.get("target") or target_of(t["label"])
                                        for t in traces))
        out.append(item | {
            "id": f"{item['id']}-{n}", "title": f"{item['title']} ({n} of {len(groups)}: {names})",
            "traces": traces, "sources": sources_of(traces),
            "y": item["y"] | ({"range": y_range} if y_range else {}),
            "facet": {"of": item["id"], "index": n, "count": len(groups)},
        })
    return out


def _chunks(traces: list[dict], limit: int) -> list[list[dict]]:
    """A target's traces in runs of at most `limit` series, a series' metrics kept together."""
    chunks: list[list[dict]] = [[]]
    for t in traces:
        if series_count({"traces": chunks[-1] + [t]}) > limit:
            chunks.append([])
        chunks[-1].append(t)
    return chunks


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
