"""chat (seed 003): sent and received per second, per client per second, delivery
latency and memory, each against the number of users (groups x clients per group).

One set of charts per scenario (stress, realistic, server); whatever else varies
(think time, listener delay, message kind) splits the traces. A chart whose metrics
no run reported is left out.

In the seed's own text (seed_text), each measurement is the Chut benchmark's block;
as in the seed, Received and the received averages count what arrived before T.
"""

from msgbench.core import units
from msgbench.data import model
from msgbench.data.points import canonical, target_label
from msgbench.views import figures
from msgbench.views.workloads import generic
from msgbench.views.workloads.plugin import Column, Headline, Plugin

# (title, y label, note, [(metric, label suffix)]); a chart no run reported is left out.
CHARTS = (
    ("Messages per second vs users", "messages (/s)", "higher is better",
     [("sent_per_s", "sent"), ("received_per_s", "received before T")]),
    ("Per client per second vs users", "messages per client (/s)", "higher is better",
     [("sent_per_client_per_s", "sent"), ("received_per_client_per_s", "received before T")]),
    ("Delivery latency vs users", "latency (µs)", "lower is better",
     [("latency_p50_us", "p50"), ("latency_p99_us", "p99"), ("latency_max_us", "max")]),
    ("Memory per user vs users", "memory per user (bytes)", "lower is better",
     [("memory_per_user_bytes", ""), ("memory_per_connection_bytes", "per connection")]),
    ("Memory vs users", "peak RSS (bytes)", "lower is better", [("peak_rss_bytes", "")]),
    # The server kind (server=ws): the chat server's and the load generator's side.
    ("CPU vs users", "CPU (%)", "the load generator must stay below 100% for the server to be "
     "the one measured", [("server_cpu_percent", "server"), ("loadgen_cpu_percent", "load generator")]),
    ("Connection time vs users", "connect p99 (ms)", "lower is better",
     [("connect_p99_ms", "p99")]),
)
LATENCY_CHART = "Delivery latency vs users"
USERS_PARAMS = ("groups", "clients_per_group")
SERIES_AXES = {"_bytes": "memory (bytes)", "_bytes_so_far": "bytes so far (I/O, allocations)",
               "_count": "count", "_ns": "time (ns)", "_per_s": "rate (/s)", "_percent": "share (%)"}


def users(entry: model.Entry):
    groups, per_group = (entry.params.get(k) for k in USERS_PARAMS)
    if isinstance(groups, int) and isinstance(per_group, int):
        return groups * per_group
    return entry.summary.get("x")


def kind(entry: model.Entry) -> str:
    """stress or realistic: the seed's two kinds. Whether users talk through a chat
    server (server=ws) or in-process is not a kind of its own here, so the server's
    points are drawn beside the in-process ones on the same axes (a split of the traces)."""
    think = entry.params.get("think_ms", 0)
    return "stress" if not think else f"realistic (think {think:,} ms)"


def section(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    items = []
    reported = set(model.metric_names(data.entries))
    for name, entries in model.group_by(data.entries, kind).items():
        split = model.splitter(entries, (*USERS_PARAMS, "duration_s", "think_ms"))
        # Realistic chat is judged by its latency (the offered rate is met by everyone):
        # the chart that answers comes first, as the Findings judge it.
        charts = CHARTS if name == "stress" else sorted(CHARTS, key=lambda c: c[0] != LATENCY_CHART)
        for title, y_label, note, metrics in charts:
            present = [(m, suffix) for m, suffix in metrics if m in reported]
            if not present:
                continue
            traces = []
            for i, (metric, suffix) in enumerate(present):
                traces += model.series_traces(data, entries, metric, x_of=users, split=split,
                                              suffix=suffix, dash=i)
            if not model.has_numbers(traces):
                continue
            items.append(figures.xy(
                ids.next(), f"chat, {name}: {title}", x_label="users (groups × clients per group)",
                y_label=y_label, traces=traces, x_ticks_at_data=True,
                note=f"{note}; error bars: min–max of the repetitions"))
    items += time_charts(data, ids)
    return items or generic.build(data, ids)


def time_charts(data: model.WorkloadData, ids: figures.Ids) -> list[dict]:
    """A measurement's series over time (memory by kind, as seed 003 ends with erlang
    statistics): for each chat point, its last repetition among those with the longest
    series; one chart per unit, one line per value name, side by side."""
    chosen: dict[tuple, tuple] = {}
    for run, m in data.measurements:
        samples = model.series_samples(m)
        if not samples or m.get("status") != "ok":
            continue
        key = (run.index, m["scenario"], target_label(m), canonical(m.get("params") or {}))
        rank = (len(samples), m.get("repetition", 0))
        if key not in chosen or rank >= chosen[key][0]:
            chosen[key] = (rank, run, m, samples)
    items = []
    for _rank, run, m, samples in chosen.values():
        who = f"{run.label} {target_label(m)}" if data.multi_run else target_label(m)
        point = f"{users(model.Entry(run, m)):,} users" if isinstance(users(model.Entry(run, m)), int) else ""
        params = model.describe_params(m.get("params") or {})
        row = f"series-{run.index}-{who}-{params}"
        for unit, names in model.series_names(samples).items():
            traces = []
            for palette_at, name in enumerate(names):
                at = [(s["t_ms"] / 1000, s.get(name)) for s in samples]
                points = [model.Point(t, v if isinstance(v, (int, float)) else None,
                                      status="ok" if isinstance(v, (int, float)) else "missing")
                          for t, v in at]
                trace = model.trace(name.removesuffix(unit).removesuffix("_bytes"), points)
                trace["colour"] = figures.OTHER_PALETTE[palette_at % len(figures.OTHER_PALETTE)]
                traces.append(trace)
            items.append(figures.xy(
                ids.next(), f"{who}, {point}: {SERIES_AXES[unit].split(' (')[0]} over time",
                subtitle=f"{params}; repetition {m.get('repetition', '?')}",
                x_label="time since the measurement started (s)", y_label=SERIES_AXES[unit],
                x_scale="linear", y_scale="linear", traces=traces, keep_colours=True,
                note="samples the worker took while the measurement ran") | {"row": row})
    return items


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


HEADLINE = Headline("chat: messages received per second (higher is better) and p50/p99 delivery latency "
                    "over every repetition's messages", (
    Column("received_per_s", "msg/s", units.number),
    Column("latency_p50_us", "p50", units.duration_us),
    Column("latency_p99_us", "p99", units.duration_us),
))

def judged_by(params: dict) -> tuple[str, ...]:
    """Stress: what arrived before T. Realistic: every target receives what the users'
    think times offer, so it is judged by how late (latency p99) and whether the senders
    held the requested rate (achieved_send_ratio)."""
    return ("latency_p99_us", "achieved_send_ratio") if params.get("think_ms") else ("received_per_s",)


PLUGIN = Plugin(name="chat", order=5, section=section, seed_text=seed_text, headline=lambda params: HEADLINE,
                judged_by=judged_by)
