"""fanin (seed 000, the OTP suite's parallel signal send/receive): its pictures and text.

The mix shorthand and the suite's method are the run side's
(msgbench/running/workloads/fanin.py).

The pictures are the OTP page's: send and receive throughput vs number of processes,
one graph per scenario, titled exactly as the page titles its graphs, so that the
suite's own output and a msgbench run land on the same axes of the results page.
"""

from msgbench.core import units
from msgbench.data import model
from msgbench.views import figures
from msgbench.views.formats import otp
from msgbench.views.workloads.plugin import Column, Headline, Plugin

_SENDERS = "senders"


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    scenarios = model.group_by(data.entries, lambda e: otp.scenario_key(e.summary))
    items = []
    # Scenarios the OTP title cannot tell apart (method, memory limit) say so underneath.
    for entries, extra in zip(scenarios.values(), otp.title_extras(scenarios), strict=True):
        subtitle = model.describe_params(extra)
        for kind, title in otp.titles(entries[0].summary).items():
            metric = otp.METRICS[kind]
            items.append(figures.xy(
                ids.next(), title, subtitle=subtitle,
                note=f"{metric}: higher is better; error bars: min–max of the repetitions",
                x_label="# of Processes", y_label="Operations/Second", x_ticks_at_data=True,
                traces=model.series_traces(data, entries, metric,
                                           x_of=lambda e: e.params.get(_SENDERS))))
    return items


OTP_AXES = {"x_label": "# of Processes", "y_label": "Operations/Second", "better": "higher",
            "x_ticks": "data"}


def page_graphs(data: model.WorkloadData) -> list[dict]:
    """Send and receive throughput per scenario, keyed like the OTP page's graphs."""
    scenarios = model.group_by(data.entries, lambda e: otp.scenario_key(e.summary))
    graphs = []
    for entries, extra in zip(scenarios.values(), otp.title_extras(scenarios), strict=True):
        subtitle = model.describe_params(extra)
        for kind, title in otp.titles(entries[0].summary).items():
            series = model.series_traces(data, entries, otp.METRICS[kind],
                                         x_of=lambda e: e.params.get(_SENDERS))
            graphs.append({"key": "otp|" + otp.graph_key(title) + ("|" + subtitle if extra else ""),
                           "title": title, "subtitle": subtitle, "primary": True,
                           "series": series, **OTP_AXES})
    return graphs


def seed_text(run: dict) -> str:
    """The run's fanin points as the OTP suite prints them (otp.py)."""
    return otp.render({"runs": [run]})


HEADLINE = Headline("fanin: signals per second, received and sent, higher is better", (
    Column("receive_throughput_per_s", "received/s", units.number),
    Column("send_throughput_per_s", "sent/s", units.number),
))

def ceilings(summary: dict, median, limits: dict) -> list:
    """C's receive rate against the pipe ping-pong: a fanin message is a one-way hand-off
    between threads; a round trip is two."""
    if summary.get("target") == "c" and (rate := median("receive_throughput_per_s")):
        return [("C fanin receive rate", rate, "pipe ping-pong hand-offs (2 per round trip)",
                 2 * limits["pipe_round_trips_per_s"], "msgs/s")]
    return []


PLUGIN = Plugin(
    name="fanin", ceilings=ceilings, headline=lambda params: HEADLINE, order=2, section=section, seed_text=seed_text,
    page_graphs=page_graphs, page_skips=frozenset(otp.METRICS.values()),
)
