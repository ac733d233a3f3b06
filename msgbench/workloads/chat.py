"""chat (seed 003): sent and received per second, per client per second, delivery
latency and memory, each against the number of users (groups x clients per group).

One set of charts per scenario (stress, realistic, server); whatever else varies
(think time, listener delay, message kind) splits the traces. A chart whose metrics
no run reported is left out.
"""

from msgbench.report import figures, model
from msgbench.report.workloads import generic

# (title, y label, note, [(metric, label suffix)])
CHARTS = (
    ("Messages per second vs users", "messages/s", "higher is better",
     [("sent_per_s", "sent"), ("received_per_s", "received before T")]),
    ("Per client per second vs users", "messages/s per client", "higher is better",
     [("sent_per_client_per_s", "sent"), ("received_per_client_per_s", "received before T")]),
    ("Delivery latency vs users", "latency (µs)", "lower is better",
     [("latency_p50_us", "p50"), ("latency_p99_us", "p99"), ("latency_max_us", "max")]),
    ("Memory vs users", "peak RSS (bytes)", "lower is better", [("peak_rss_bytes", "")]),
)
USERS_PARAMS = ("groups", "clients_per_group")


def users(entry: model.Entry):
    groups, per_group = (entry.params.get(k) for k in USERS_PARAMS)
    if isinstance(groups, int) and isinstance(per_group, int):
        return groups * per_group
    return entry.summary.get("x")


def build(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    items = []
    reported = set(model.metric_names(data.entries))
    for scenario, entries in model.group_by(data.entries,
                                            lambda e: e.summary["scenario"]).items():
        split = model.splitter(entries, (*USERS_PARAMS, "duration_s"))
        for title, y_label, note, metrics in CHARTS:
            present = [(m, suffix) for m, suffix in metrics if m in reported]
            if not present:
                continue
            traces = []
            for i, (metric, suffix) in enumerate(present):
                traces += model.series_traces(data, entries, metric, x_of=users, split=split,
                                              suffix=suffix, dash=i > 0)
            items.append(figures.xy(
                ids.next(), f"{scenario}: {title}", x_label="users (groups x clients per group)",
                y_label=y_label, traces=traces,
                note=f"{note}; error bars: min–max of the repetitions"))
    return items or generic.build(data, ids)
