"""socket (seed 002): round trip vs message size (echo) and bandwidth vs message size
(flow), each local and remote, as the seed's plots.

Everything else that varies (sockets 1 or 16, binary or list data) splits the traces
of one chart rather than making more charts, as the seed compares them on one plot.
"""

from msgbench.core import units
from msgbench.data import model
from msgbench.views import figures
from msgbench.views.workloads import generic
from msgbench.views.workloads.plugin import Column, Headline, Plugin

SIZE = "size"
CHARTS = (
    ("echo", "round_trip_us", "Round trip vs message size", "round trip (µs)",
     "time per round trip; lower is better"),
    ("flow", "bandwidth_bytes_per_s", "Bandwidth vs message size", "bandwidth (bytes/s)",
     "bytes per second at the receiver; higher is better"),
)
PLACEMENTS = ("local", "remote")


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    items = []
    for mode, metric, title, y_label, note in CHARTS:
        for placement in PLACEMENTS:
            entries = [e for e in data.entries if e.params.get("mode") == mode
                       and e.params.get("placement", "local") == placement]
            if not entries:
                continue
            split = model.splitter(entries, (SIZE, "mode", "placement"))
            drawn, absent = _without_lists_elsewhere(data, entries, split)
            shown = note + (f"; n/a at every size, not drawn: {', '.join(absent)}" if absent else "")
            traces = model.series_traces(data, drawn, metric, x_of=lambda e: e.params.get(SIZE),
                                         split=split)
            # Round trips over sizes that double from 64 bytes span a decade or more: a log
            # axis keeps the small sizes readable (the default waits for two decades).
            values = [v for t in traces for v in t["y"]]
            items.append(figures.xy(
                ids.next(), f"{title} ({mode}, {placement})", x_label="message size (bytes)",
                y_label=y_label, note=f"{shown}; error bars: min–max of the repetitions",
                y_scale=figures.auto_scale(values, span=10), traces=traces))
    # Points the charts above cannot place (no mode) still get drawn, generically.
    return items or generic.build(data, ids)


def _without_lists_elsewhere(data: model.WorkloadData, entries: list[model.Entry],
                             split) -> tuple[list[model.Entry], list[str]]:
    """data=list is an Erlang notion: the other targets answer n/a at every size, and
    a dozen such series would bury the chart under n/a marks; they are named in the
    note instead. Any other series, n/a or not, is drawn."""
    drawn, absent = [], []
    for members in model.group_by(entries, lambda e: (e.series_key(), split(e))).values():
        if all(e.params.get("data") == "list" and e.summary["status"] == "unsupported" for e in members):
            absent.append(" ".join(filter(None, [data.label(members[0]),
                                                 f"[{split(members[0])}]" if split(members[0]) else ""])))
        else:
            drawn += members
    return drawn, absent


ECHO = Headline("socket echo: round trip per message, lower is better",
                (Column("round_trip_us", "round trip", units.duration_us),))
FLOW = Headline("socket flow: bandwidth at the receiver, higher is better",
                (Column("bandwidth_bytes_per_s", "bandwidth MB/s", units.megabytes),))


def headline(params: dict) -> Headline:
    """Echo is about the time a message takes there and back, flow about bytes per
    second: the seed's two plots."""
    return ECHO if params.get("mode") == "echo" else FLOW


def ceilings(summary: dict, median, limits: dict) -> list:
    """C's flow bandwidth against loopback TCP's."""
    if summary.get("target") == "c" and summary["params"].get("mode") == "flow" and (
            bw := median("bandwidth_bytes_per_s")):
        return [("C socket flow bandwidth", bw / 1e9, "loopback TCP bandwidth (1 MiB writes)",
                 limits["loopback_bytes_per_s"] / 1e9, "GB/s")]
    return []


PLUGIN = Plugin(name="socket", order=3, section=section, headline=headline, ceilings=ceilings)
