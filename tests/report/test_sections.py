"""Each workload's pictures: what the ring, fanin and generic sections contain."""

from msgbench import figures, model, workloads
from msgbench.report.sections import section
from tests.report.report_fixtures import FANIN_SENDERS, RING_MS, RING_NS

OTP_SEND_1 = ("Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {message_size,1}, "
              "Spawn Options=[{message_queue_data,off_heap}]")


def section_of(doc, workload):
    return section(next(d for d in model.collect(doc) if d.workload == workload))


def kinds(section):
    return [item["kind"] for item in section["items"]]


def test_ring_section_has_creation_pass_per_m_tables_and_heatmaps(one_run):
    ring = section_of(one_run, "ring")
    titles = [item["title"] for item in ring["items"]]
    assert titles[0] == "Ring creation time vs ring size"
    assert titles[1:3] == [f"Passing time vs ring size, m = {m:,} laps" for m in RING_MS]
    assert kinds(ring) == ["xy", "xy", "xy"] + ["table", "heatmap"] * 3


def test_ring_creation_is_one_trace_per_target_over_n_on_log_axes(one_run):
    creation = section_of(one_run, "ring")["items"][0]
    assert [t["label"] for t in creation["traces"]] == ["erlang/default", "go/default", "c/default"]
    assert all(t["x"] == list(RING_NS) for t in creation["traces"])
    assert creation["x"]["scale"] == "log" and creation["y"]["scale"] == "log"


def test_ring_creation_pools_m_and_survives_a_timeout(one_run):
    creation = section_of(one_run, "ring")["items"][0]
    c = creation["traces"][2]
    # c timed out at n=100000, m=100; its creation at m=10 still counts.
    assert c["status"][-1] == "ok" and c["y"][-1] is not None


def test_ring_pass_figure_marks_the_timeout_failed_not_zero(one_run):
    pass_100 = section_of(one_run, "ring")["items"][2]
    c = next(t for t in pass_100["traces"] if t["label"] == "c/default")
    assert c["status"][-1] == "timeout" and c["y"][-1] is None
    assert "60 s" in c["note"][-1]


def test_ring_table_is_the_seeds_n_by_m_grid(one_run):
    table = next(i for i in section_of(one_run, "ring")["items"]
                 if i["kind"] == "table" and i["title"].startswith("c/default"))
    assert table["columns"] == ["Processes", "Creation time (ms)", "10 laps (ms)", "100 laps (ms)"]
    assert [row[0]["text"] for row in table["rows"]] == [f"{n:,}" for n in RING_NS]
    assert table["rows"][-1][3] == {"text": "failed (timeout)", "status": "timeout"}


def test_ring_heatmap_is_hops_per_s_over_n_and_m_with_one_colour_scale(one_run):
    heatmaps = [i for i in section_of(one_run, "ring")["items"] if i["kind"] == "heatmap"]
    first = heatmaps[0]
    assert first["x"]["values"] == list(RING_MS) and first["y"]["values"] == list(RING_NS)
    assert len(first["z"]) == len(RING_NS) and len(first["z"][0]) == len(RING_MS)
    assert {tuple(h["z_range"]) for h in heatmaps} == {tuple(first["z_range"])}
    c = heatmaps[2]
    assert c["z"][-1][-1] is None and c["status"][-1][-1] == "timeout"


def test_ring_sweeping_m_at_one_n_draws_passing_time_vs_m(one_run):
    data = next(d for d in model.collect(one_run) if d.workload == "ring")
    data.entries = [e for e in data.entries if e.params["n"] == 1000]
    items = section(data)["items"]
    assert items[1]["title"] == "Passing time vs laps, n = 1,000"
    assert items[1]["traces"][0]["x"] == list(RING_MS)


def test_fanin_is_send_and_receive_per_scenario_titled_as_on_the_otp_page(one_run):
    fanin = section_of(one_run, "fanin")
    assert kinds(fanin) == ["xy"] * 4
    first = fanin["items"][0]
    assert first["title"] == OTP_SEND_1
    assert fanin["items"][1]["title"] == OTP_SEND_1.replace("Send", "Receive")
    assert (first["x"]["label"], first["y"]["label"]) == ("# of Processes", "Operations/Second")
    assert first["x"]["ticks"] == "data"
    assert all(t["x"] == list(FANIN_SENDERS) for t in first["traces"])


def test_fanin_unsupported_target_is_n_a_everywhere_and_failed_point_is_failed(one_run):
    mixed_receive = section_of(one_run, "fanin")["items"][3]
    go = next(t for t in mixed_receive["traces"] if t["label"] == "go/default")
    assert set(go["status"]) == {"unsupported"} and set(go["y"]) == {None}
    send_1 = section_of(one_run, "fanin")["items"][0]
    c = next(t for t in send_1["traces"] if t["label"] == "c/default")
    assert c["status"][-1] == "failed" and c["y"][-1] is None


def test_fanin_scenarios_the_title_cannot_tell_apart_say_what_differs(one_run):
    run = one_run["runs"][0]
    extra = [dict(s, params=dict(s["params"], method="otp")) for s in run["summary"]
             if s["workload"] == "fanin"]
    run["summary"] += extra
    items = section_of(one_run, "fanin")["items"]
    assert len(items) == 8
    assert {i["subtitle"] for i in items} == {"method=msgbench", "method=otp"}


def test_a_workload_without_a_module_gets_the_generic_section(one_run):
    for s in one_run["runs"][0]["summary"]:
        if s["workload"] == "socket":
            s["workload"] = "pingpong"
    pingpong = section_of(one_run, "pingpong")
    assert pingpong["title"] == "pingpong"  # no spec: the workload's name
    [figure] = pingpong["items"]
    assert figure["title"] == "socket-echo: bandwidth bytes (/s) vs size"  # no spec: the first metric
    assert figure["x"]["label"] == "size" and figure["x"]["scale"] == "log"


def test_unswept_scenarios_share_one_bar_chart():
    def summary(scenario, target, value):
        return {"scenario": scenario, "workload": "pingpong", "target": target,
                "variant": "default",
                "params": {"groups": 10}, "sweep": None, "x": None, "status": "ok", "ok": 3,
                "total": 3, "metrics": {"sent_per_s": {"n": 3, "median": value}}}

    doc = {"runs": [{"id": "r", "summary": [summary("stress", "erlang", 5.0),
                                            summary("realistic", "erlang", 1.0),
                                            summary("stress", "go", 4.0)]}]}
    [figure] = section_of(doc, "pingpong")["items"]
    assert figure["bars"] and figure["x"]["scale"] == "category"
    assert figure["traces"][0]["x"] == ["realistic groups=10", "stress groups=10"]
    assert figure["traces"][1]["status"] == ["missing", "ok"]


def test_every_section_ends_with_a_table_of_all_summaries(one_run):
    table = section_of(one_run, "fanin")["summary_table"]
    assert len(table["rows"]) == 2 * 3 * len(FANIN_SENDERS)
    assert "receive throughput (/s) ↑" in table["columns"]
    statuses = {cell["text"] for row in table["rows"] for cell in row}
    assert {"n/a", "failed"} <= statuses


def test_a_plugin_section_is_what_the_report_draws(one_run, monkeypatch):
    def socket_pictures(data, ids):
        return [figures.table(ids.next(), "custom", ["a"], [[figures.cell("1")]])]

    monkeypatch.setitem(workloads.PLUGINS, "socket", workloads.Plugin(name="socket", section=socket_pictures))
    assert [i["title"] for i in section_of(one_run, "socket")["items"]] == ["custom"]


# ---------------------------------------------------------------- socket, pubsub, chat


def point(workload, scenario, params, metrics, target="erlang", status="ok"):
    return {"scenario": scenario, "workload": workload, "target": target, "variant": "default",
            "params": params, "sweep": None, "x": None, "status": status, "ok": 3, "total": 3,
            "metrics": {k: {"n": 3, "median": v, "min": v * 0.9, "max": v * 1.1}
                        for k, v in metrics.items()}, "warnings": []}


def doc_of(points):
    return {"runs": [{"id": "r", "summary": points}]}


def test_socket_is_round_trip_and_bandwidth_vs_size_local_and_remote():
    points = [point("socket", f"socket-{mode}", {"mode": mode, "size": size, "sockets": sockets,
                                                 "placement": placement}, {metric: size * 2.0})
              for mode, metric in (("echo", "round_trip_us"), ("flow", "bandwidth_bytes_per_s"))
              for placement in ("local", "remote") for sockets in (1, 16)
              for size in (64, 128, 256)]
    items = section_of(doc_of(points), "socket")["items"]
    assert [i["title"] for i in items] == [
        "Round trip vs message size (echo, local)", "Round trip vs message size (echo, remote)",
        "Bandwidth vs message size (flow, local)", "Bandwidth vs message size (flow, remote)"]
    assert [t["label"] for t in items[0]["traces"]] == ["erlang/default [sockets=1]",
                                                        "erlang/default [sockets=16]"]
    assert items[2]["traces"][0]["y"] == [128.0, 256.0, 512.0]


def test_pubsub_draws_message_and_payload_rate_on_two_axes():
    points = [point("pubsub", "pubsub", {"payload_bytes": size, "source_threads": threads},
                    {"msgs_per_s": 1e6 / threads, "payload_bits_per_s": 8e6 * size},
                    target="nats")
              for threads in (1, 2) for size in (16, 256, 4096)]
    [chart] = section_of(doc_of(points), "pubsub")["items"]
    assert chart["y2"]["label"] == "payload bits/s (dashed)"
    assert [(t["label"], t["axis"], t["dash"]) for t in chart["traces"]] == [
        ("nats/default [source_threads=1] messages", "y", False),
        ("nats/default [source_threads=2] messages", "y", False),
        ("nats/default [source_threads=1] payload", "y2", True),
        ("nats/default [source_threads=2] payload", "y2", True)]
    assert chart["y2"]["scale"] == "log"  # 16 .. 4096 bytes: decades apart


def test_chat_draws_rates_latency_and_memory_vs_users():
    points = [point("chat", "stress", {"groups": g, "clients_per_group": 10, "duration_s": 10},
                    {"sent_per_s": 100.0 * g, "received_per_s": 90.0 * g,
                     "latency_p50_us": 50.0, "latency_p99_us": 500.0, "peak_rss_bytes": 1e7})
              for g in (10, 100, 750)]
    items = section_of(doc_of(points), "chat")["items"]
    assert [i["title"] for i in items] == ["stress: Messages per second vs users",
                                           "stress: Delivery latency vs users",
                                           "stress: Memory vs users"]
    assert items[0]["traces"][0]["x"] == [100, 1000, 7500]
    assert [t["label"] for t in items[1]["traces"]] == ["erlang/default p50", "erlang/default p99"]


def test_socket_leaves_out_list_series_that_are_n_a_at_every_size_and_names_them():
    def at(target, data, status, size):
        return point("socket", "socket-echo", {"mode": "echo", "size": size, "data": data},
                     {"round_trip_us": 10.0} if status == "ok" else {}, target=target, status=status)
    points = [at("erlang", data, "ok", size) for data in ("binary", "list") for size in (64, 1024)]
    points += [at("go", "binary", "ok", size) for size in (64, 1024)]
    points += [at("go", "list", "unsupported", size) for size in (64, 1024)]
    points += [at("c", "binary", "unsupported", size) for size in (64, 1024)]
    [chart] = section_of(doc_of(points), "socket")["items"]
    assert [t["label"] for t in chart["traces"]] == [
        "erlang/default [data=binary]", "erlang/default [data=list]", "go/default [data=binary]",
        "c/default [data=binary]"]  # n/a everywhere, but not a list series: drawn
    assert "n/a at every size, not drawn: go/default [data=list]" in chart["note"]
