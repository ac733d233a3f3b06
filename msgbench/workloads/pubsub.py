"""pubsub (seed 001): message rate and payload rate vs payload size, as in the seed's
figure 5 — but in two panels side by side rather than one chart with two y axes, whose
scales a reader cannot tell apart; one pair per scenario, traces split by whatever else
varies (one or two source threads, batching). Where the run measured delivery latency
(open-loop publishing at a set rate), a latency chart follows.
"""

from msgbench import figures, model
from msgbench.workloads import generic
from msgbench.workloads.plugin import Plugin

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


PLUGIN = Plugin(name="pubsub", order=4, section=section)
