"""pubsub (seed 001): message rate and payload rate vs payload size, as in the seed's
figure 5 — but in two panels side by side rather than one chart with two y axes, whose
scales a reader cannot tell apart; one pair per scenario, traces split by whatever else
varies (one or two source threads, batching). Where the run measured delivery latency
(open-loop publishing at a set rate), a latency chart follows.
"""

from msgbench.core import units
from msgbench.data import model
from msgbench.views import figures
from msgbench.views.workloads import generic
from msgbench.views.workloads.plugin import Column, Headline, Plugin

PAYLOAD = "payload_bytes"
MESSAGES = "msgs_per_s"
PAYLOAD_RATE = "payload_bits_per_s"
LATENCY = (("latency_p50_us", "p50"), ("latency_p99_us", "p99"), ("latency_p999_us", "p99.9"))
NOTE = "at the receivers; higher is better; error bars: min–max of the repetitions"


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    items = []
    reported = set(model.metric_names(data.entries))
    for scenario, entries in model.group_by(data.entries,
                                            lambda e: e.summary["scenario"]).items():
        split = model.splitter(entries, (PAYLOAD,))

        def x_of(e):
            return e.params.get(PAYLOAD)

        row = f"pubsub-rates-{scenario}"
        for metric, title, y_label in ((MESSAGES, "message rate", "messages (/s)"),
                                       (PAYLOAD_RATE, "payload rate", "payload (bits/s)")):
            items.append(figures.xy(
                ids.next(), f"{scenario}: {title} vs payload size", x_label="payload size (bytes)",
                y_label=y_label, note=NOTE,
                traces=model.series_traces(data, entries, metric, x_of=x_of, split=split))
                | {"row": row})
        present = [(m, suffix) for m, suffix in LATENCY if m in reported]
        if present:
            traces = []
            for i, (metric, suffix) in enumerate(present):
                traces += model.series_traces(data, entries, metric, x_of=x_of, split=split,
                                              suffix=suffix, dash=i)
            if model.has_numbers(traces):
                items.append(figures.xy(
                    ids.next(), f"{scenario}: delivery latency vs payload size",
                    x_label="payload size (bytes)", y_label="latency (µs)", traces=traces,
                    note="publish to receive; lower is better; error bars: min–max of the repetitions"))
    return items or generic.build(data, ids)


CLOSED_LOOP = Headline("pubsub: message and payload rate at the receivers, higher is better", (
    Column(MESSAGES, "msg/s", units.number),
    Column(PAYLOAD_RATE, "payload bit/s", units.number),
    Column("loss_ratio", "lost", lambda v: f"{v:.1%}"),
))
OPEN_LOOP = Headline("pubsub open loop: achieved rate (share of the requested one) and p50/p99 latency from the "
                     "intended send time over every repetition's messages, lower latency is better", (
    Column(MESSAGES, "achieved msg/s", units.number, share_of="rate"),
    Column("latency_p50_us", "p50", units.duration_us),
    Column("latency_p99_us", "p99", units.duration_us),
    Column("loss_ratio", "lost", lambda v: f"{v:.1%}"),
))


def headline(params: dict) -> Headline:
    """As fast as possible: the seed's two rates. Open loop (rate > 0): whether the
    requested rate was reached, and the latency percentiles it was measured for."""
    return OPEN_LOOP if params.get("rate") else CLOSED_LOOP


def ceilings(summary: dict, median, limits: dict) -> list:
    """The tcp target's payload bytes against loopback TCP's bandwidth: every receiver gets
    every message over its own connection, so the bytes on loopback."""
    params = summary["params"]
    if summary.get("target") == "tcp" and (rate := median("msgs_per_s")):
        wire = rate * params.get("payload_bytes", 0) * params.get("receivers", 1)
        return [("tcp pubsub payload bytes delivered (all receivers)", wire / 1e9,
                 "loopback TCP bandwidth (1 MiB writes)", limits["loopback_bytes_per_s"] / 1e9, "GB/s")]
    return []


PLUGIN = Plugin(name="pubsub", order=4, section=section, headline=headline, ceilings=ceilings)
