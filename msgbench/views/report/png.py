"""Each figure of the report as a PNG, drawn with matplotlib (Agg, no display needed).

The figure descriptions are the ones the HTML report draws (figures.py), so a PNG
shows what the interactive chart shows: the same traces, error bars, scales, and
n/a or failed points marked in a strip above the x axis rather than drawn as zero.
"""

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # before pyplot: never look for a display

import matplotlib.pyplot as plt
from matplotlib import colors, ticker, transforms

from msgbench.views import figures
from msgbench.views.report import html

_MARKERS = {"circle": "o", "square": "s", "triangle": "^", "diamond": "D", "ring": "o", "star": "*"}
_LINES = {"solid": "-", "dotted": ":", "dashdot": "-.", "longdash": (0, (12, 4)), "dashed": "--",
          "none": "none"}
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
            "#17becf", "#7f7f7f", "#bcbd22")


def write_pngs(doc: dict, outdir: Path, history: list[dict] | None = None) -> list[Path]:
    """Every figure of the report of doc (and its history) as outdir/<id>-<title>.png."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    colours: dict[str, str] = {}
    items = [item for section in html.sections_of(doc) for item in section["items"]]
    for item in items + list(history or []):
        if item["kind"] == "table":
            continue
        path = outdir / f"{item['id']}-{figures.slug(item['title'])}.png"
        fig = draw(item, colours)
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def draw(item: dict, colours: dict[str, str] | None = None):
    """A matplotlib Figure for one figure description."""
    colours = {} if colours is None else colours
    if item["kind"] == "heatmap":
        return _heatmap(item)
    return _xy(item, colours)


def _colour(label: str, colours: dict[str, str]) -> str:
    if label not in colours:
        colours[label] = _PALETTE[len(colours) % len(_PALETTE)]
    return colours[label]


def _title(ax, item: dict, width: int = 90) -> None:
    lines = textwrap.wrap(item["title"], width)[:3]
    if item.get("subtitle"):
        lines.append(item["subtitle"])
    ax.set_title("\n".join(lines), fontsize=9, loc="left")


_SI = ticker.FuncFormatter(lambda v, _pos: _si(v) if v else "0")
# 1,400%, never 1.4k%: relative views are read as percentages.
_PERCENT = ticker.FuncFormatter(lambda v, _pos: f"{v:,.0f}%" if abs(v) >= 100 else f"{v:.3g}%")


def _numeric(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _xy(item: dict, colours: dict[str, str]):
    fig, ax = plt.subplots(figsize=(10, 4.8))
    traces = item["traces"]
    offsets = [0.0] * len(traces)
    if item["x"]["scale"] == figures.SERIES_SCALE:
        traces, offsets = _by_series(traces)
        xs = list(dict.fromkeys(t["x"][0] for t in traces))
    else:
        xs = sorted({x for t in traces for x in t["x"]},
                    key=lambda v: (0, v, "") if _numeric(v) else (1, 0, str(v)))
    category = (item["bars"] or item["x"]["scale"] in ("category", figures.SERIES_SCALE)
                or not all(map(_numeric, xs)))
    position = {x: i for i, x in enumerate(xs)}
    ax2 = ax.twinx() if item.get("y2") else None
    # The n/a / failed strip: x in data coordinates, y as a fraction of the axes height.
    strip = transforms.blended_transform_factory(ax.transData, ax.transAxes)
    width = 0.8 / max(1, len(traces))
    marks_at: dict = {}  # x -> n/a or failed marks drawn there so far, to set them side by side
    for index, t in enumerate(traces):
        colour = t.get("colour") or _colour(t.get("colour_key") or t["label"], colours)
        target = ax2 if (t.get("axis") == "y2" and ax2 is not None) else ax
        label = t["label"] + (" (right axis)" if target is ax2 else "")
        ok = [i for i, s in enumerate(t["status"]) if s == "ok" and _numeric(t["y"][i])]
        px = [(position[t["x"][i]] + offsets[index] if category else t["x"][i]) for i in range(len(t["x"]))]
        if item["bars"]:
            px = [p - 0.4 + width * (index + 0.5) for p in px]
        ys = [t["y"][i] for i in ok]
        err = None
        if all(_numeric(t["lo"][i]) and _numeric(t["hi"][i]) for i in ok) and ok:
            err = [[t["y"][i] - t["lo"][i] for i in ok], [t["hi"][i] - t["y"][i] for i in ok]]
        if item["bars"]:
            target.bar([px[i] for i in ok], ys, width=width * 0.9, color=colour, label=label,
                       yerr=err, ecolor="#333", capsize=2)
        else:
            # Break the line where a point has no number, rather than dipping to zero.
            line_x = [px[i] if i in ok else math.nan for i in range(len(px))]
            line_y = [t["y"][i] if i in ok else math.nan for i in range(len(px))]
            line = t.get("line") or ("dashed" if t.get("dash") else "solid")
            marker = _MARKERS.get(t.get("marker"), list(_MARKERS.values())[index % len(_MARKERS)])
            ring = t.get("marker") == "ring"  # an open circle around the point it marks
            star = t.get("marker") == figures.REFERENCE_MARKER
            target.plot(line_x, line_y, color=colour, linestyle=_LINES.get(line, "-"),
                        marker=marker, markersize=11 if ring else 10 if star else 5, label=label,
                        gid=t.get("source", ""), markerfacecolor="none" if ring else colour,
                        markeredgecolor="#222" if star else colour)
            if err:
                target.errorbar([px[i] for i in ok], ys, yerr=err, fmt="none", ecolor=colour,
                                capsize=3, alpha=0.75, linewidth=1)
        for i, status in enumerate(t["status"]):
            if status in ("ok", "missing") or i in ok:
                continue
            text = "n/a" if status == "unsupported" else "✕"
            slot = marks_at.setdefault(px[i], [0])
            shifted = transforms.offset_copy(strip, fig=fig, x=14 * slot[0], units="points")
            slot[0] += 1
            ax.text(px[i], 0.03, text, transform=shifted, color=colour, ha="center",
                    va="bottom", fontsize=8 if text == "n/a" else 11, fontweight="bold")
    _scales(ax, item["y"]["scale"], ax2, item.get("y2"), item["x"]["scale"], category,
            item["y"].get("format"))
    if item["y"].get("range"):  # facets of one chart share their y range
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, item["y"]["range"][0]) if item["y"]["scale"] == "log" else lo,
                    max(hi, item["y"]["range"][1] * 1.05))
    if item["x"]["scale"] == figures.SERIES_SCALE:  # series names: long, so slanted
        ax.set_xticks(range(len(xs)), [_tick(x) for x in xs], fontsize=8, rotation=20, ha="right")
    elif category:
        ax.set_xticks(range(len(xs)), [_tick(x) for x in xs], fontsize=8)
    elif item["x"].get("ticks") == "data":
        ax.set_xticks(xs, [_tick(x) for x in xs], fontsize=8)
    ax.set_xlabel(item["x"]["label"])
    ax.set_ylabel(item["y"]["label"])
    if ax2 is not None:
        ax2.set_ylabel(item["y2"]["label"])
    ax.grid(True, alpha=0.3)
    handles, labels = ax.get_legend_handles_labels()
    if ax2 is not None:
        more = ax2.get_legend_handles_labels()
        handles, labels = handles + more[0], labels + more[1]
    handles, labels = _grouped(handles, labels, item)
    if handles:  # beside the plot, where it hides no point (nor an n/a mark)
        beside = 1.14 if ax2 is not None else 1.02  # clear of the second axis's labels
        # handlelength: room for a dash pattern to show (p50 solid, p99 dashed, max dotted).
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(beside, 1),
                  borderaxespad=0, handlelength=4)
    if item.get("note"):
        fig.text(0.01, 0.01, item["note"], fontsize=6.5, color="#555")
    _title(ax, item)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


def _by_series(traces: list[dict]) -> tuple[list[dict], list[float]]:
    """A one-x chart (figures.SERIES_SCALE): each trace at its series' category, the
    traces of one series side by side, as plot.js's bySeries places them."""
    count: dict[str, int] = {}
    slots = []
    for t in traces:
        name = t.get("series") or t["label"]
        slots.append(count.get(name, 0))
        count[name] = count.get(name, 0) + 1
    placed, offsets = [], []
    for t, slot in zip(traces, slots, strict=True):
        name = t.get("series") or t["label"]
        n = count[name]
        placed.append(t | {"x": [name] * len(t["x"])})
        offsets.append((slot - (n - 1) / 2) * 0.7 / n if n > 1 else 0.0)
    return placed, offsets


def _grouped(handles, labels, item):
    """With several sources (runs, builds), the legend's entries under a heading each."""
    sources = item.get("sources") or []
    if len(sources) < 2:
        return handles, labels
    by_label = {t["label"]: t.get("source", "") for t in item["traces"]}
    out_h, out_l = [], []
    for source in sources:
        members = [(h, lab) for h, lab in zip(handles, labels, strict=True)
                   if by_label.get(lab.removesuffix(" (right axis)")) == source]
        if not members:
            continue
        out_h.append(plt.Line2D([], [], linestyle="none"))  # a heading, no mark
        out_l.append(source or "(this run)")
        out_h += [h for h, _ in members]
        # Under its source's heading an entry need not repeat the source.
        out_l += ["  " + (lab.removeprefix(source + " ") if source else lab) for _, lab in members]
    return out_h, out_l


def _scales(ax, y_scale, ax2, y2, x_scale, category, y_format=None) -> None:
    for axis, scale in ((ax, y_scale), (ax2, y2 and y2["scale"])):
        if axis is None:
            continue
        if scale == "log":
            axis.set_yscale("log")
        else:  # linear axes start at zero, as the OTP page's do
            axis.set_ylim(bottom=min(0, axis.get_ylim()[0]))
        axis.yaxis.set_major_formatter(_PERCENT if axis is ax and y_format == "percent" else _SI)
    if x_scale == "log" and not category:
        ax.set_xscale("log")
        ax.xaxis.set_major_formatter(_SI)  # 100, 1k, 10k as the HTML's ticks, not 10^2


def _tick(x) -> str:
    return f"{x:,}" if _numeric(x) else str(x)


def _heatmap(item: dict):
    rows, cols = item["y"]["values"], item["x"]["values"]
    fig, ax = plt.subplots(figsize=(max(5.5, 2.4 + 1.1 * len(cols)), 1.6 + 0.45 * len(rows)))
    z = [[v if _numeric(v) else math.nan for v in row] for row in item["z"]]
    values = [v for row in z for v in row if not math.isnan(v)]
    if item.get("z_range"):
        values = values + list(item["z_range"])
    norm = None
    if values and item["scale"] == "log" and min(values) > 0:
        norm = colors.LogNorm(vmin=min(values), vmax=max(values))
    elif values:
        norm = colors.Normalize(vmin=min(values), vmax=max(values))
    cmap = plt.get_cmap("viridis").with_extremes(bad="#e8e8e8")
    image = ax.imshow(z, cmap=cmap, norm=norm, aspect="auto")
    for r, row in enumerate(z):
        for c, v in enumerate(row):
            status = item["status"][r][c]
            text = _si(v) if status == "ok" and not math.isnan(v) else figures.status_text(status)
            ax.text(c, r, text, ha="center", va="center", fontsize=7,
                    color="#222" if math.isnan(v) else "white")
    ax.set_xticks(range(len(cols)), [_tick(c) for c in cols], fontsize=8)
    ax.set_yticks(range(len(rows)), [_tick(r) for r in rows], fontsize=8)
    ax.set_xlabel(item["x"]["label"])
    ax.set_ylabel(item["y"]["label"])
    if values:
        fig.colorbar(image, ax=ax, label=item["z_label"], format=_SI)
    _title(ax, item, width=55)
    fig.tight_layout()
    return fig


def _si(v: float) -> str:
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(v) >= limit:
            return f"{v / limit:.3g}{suffix}"
    return f"{v:.3g}"
