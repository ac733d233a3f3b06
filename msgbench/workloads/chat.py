"""chat (seed 003): sent and received per second, per client per second, delivery
latency and memory, each against the number of users (groups x clients per group).

One set of charts per scenario (stress, realistic, server); whatever else varies
(think time, listener delay, message kind) splits the traces. A chart whose metrics
no run reported is left out.

In the seed's own text (seed_text), each measurement is the Chut benchmark's block;
as in the seed, Received and the received averages count what arrived before T.
"""

from msgbench import figures, model
from msgbench.points import target_label
from msgbench.workloads import generic
from msgbench.workloads.plugin import Plugin

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


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
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


# ---------------------------------------------------------------- the seed's text



def measurement_block(m: dict) -> str:
    p, x = m["params"], m["metrics"]
    head = f"G:{p['groups']:<6}CPG:{p['clients_per_group']:<4}T:{p['duration_s']:g}\n"
    if m["status"] != "ok":
        return head + f"{m['status'].upper()}: {m['error']}\n"
    lines = [
        ("Sent", int(x["sent_count"])),
        ("Received", int(x["received_in_window_count"])),
        ("Average sent per second", x["sent_per_s"]),
        ("Average received per second", x["received_per_s"]),
        ("Average sent per group", x["sent_per_group_count"]),
        ("Average received per group", x["received_per_group_count"]),
        ("Average sent per client", x["sent_per_client_count"]),
        ("Average received per client", x["received_per_client_count"]),
        ("Average sent per client per second", x["sent_per_client_per_s"]),
        ("Average received per client per second", x["received_per_client_per_s"]),
    ]
    block = head + "".join(f"{label}: {value}\n" for label, value in lines)
    # The seed's Received stopped counting at T; what arrived in the drain is said
    # after the block rather than folded into the seed's figures.
    late = int(x["received_count"]) - int(x["received_in_window_count"])
    return block + f"(after T, in the drain: {late} more received; {int(x['received_count'])} in all)\n"


def seed_text(run: dict) -> str:
    return "\n".join(f"[{target_label(m)}{_kind(m)} repetition {m['repetition']}]\n{measurement_block(m)}"
                     for m in run["measurements"] if m["workload"] == "chat" and not m["warmup"])


def _kind(m: dict) -> str:
    """" server=ws" for the chat server kind's blocks, so they are told from the in-process ones."""
    server = m["params"].get("server", "none")
    return "" if server == "none" else f" server={server}"


PLUGIN = Plugin(name="chat", order=5, section=section, seed_text=seed_text)
