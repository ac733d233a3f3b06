"""Each workload's pictures: what the ring, fanin and generic sections contain."""

from msgbench.data import model
from msgbench.views import figures, workloads
from msgbench.views.report.sections import section
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


def test_pubsub_draws_message_and_payload_rate_in_two_panels_side_by_side():
    points = [point("pubsub", "pubsub", {"payload_bytes": size, "source_threads": threads},
                    {"msgs_per_s": 1e6 / threads, "payload_bits_per_s": 8e6 * size},
                    target="nats")
              for threads in (1, 2) for size in (16, 256, 4096)]
    messages, payload = section_of(doc_of(points), "pubsub")["items"]
    assert messages["title"] == "pubsub: message rate vs payload size"
    assert payload["title"] == "pubsub: payload rate vs payload size"
    assert messages["y2"] is None and payload["y2"] is None  # no second axis to misread
    assert messages["row"] == payload["row"]  # laid out side by side
    assert [t["label"] for t in messages["traces"]] == [
        "nats/default [source_threads=1]", "nats/default [source_threads=2]"]
    assert payload["y"]["scale"] == "log"  # 8e6 * 16 .. 8e6 * 4096: decades apart


def test_pubsub_draws_latency_when_the_run_measured_it():
    points = [point("pubsub", "pubsub-open", {"payload_bytes": size},
                    {"msgs_per_s": 1e5, "payload_bits_per_s": 8e5 * size,
                     "latency_p50_us": 30.0 * size, "latency_p99_us": 90.0 * size})
              for size in (16, 256, 4096)]
    items = section_of(doc_of(points), "pubsub")["items"]
    latency = items[2]
    assert latency["title"] == "pubsub-open: delivery latency vs payload size"
    assert [t["label"] for t in latency["traces"]] == ["erlang/default p50", "erlang/default p99"]
    # 480 µs .. 368,640 µs: drawn in ms, the unit that keeps the numbers short.
    assert latency["y"]["label"] == "latency (ms)"
    assert latency["traces"][1]["y"][-1] == 90.0 * 4096 / 1000
    assert latency["y"]["scale"] == "log"


def test_chat_draws_rates_latency_and_memory_vs_users():
    points = [point("chat", "stress", {"groups": g, "clients_per_group": 10, "duration_s": 10},
                    {"sent_per_s": 100.0 * g, "received_per_s": 90.0 * g,
                     "latency_p50_us": 50.0, "latency_p99_us": 500.0, "peak_rss_bytes": 1e7})
              for g in (10, 100, 750)]
    items = section_of(doc_of(points), "chat")["items"]
    assert [i["title"] for i in items] == ["chat, stress: Messages per second vs users",
                                           "chat, stress: Delivery latency vs users",
                                           "chat, stress: Memory vs users"]
    assert items[0]["traces"][0]["x"] == [100, 1000, 7500]
    assert items[0]["x"]["ticks"] == "data"
    assert [t["label"] for t in items[1]["traces"]] == ["erlang/default p50", "erlang/default p99"]


def test_chat_server_kind_is_drawn_beside_the_in_process_kind():
    def at(server, g, scenario):
        return point("chat", scenario, {"groups": g, "clients_per_group": 10, "duration_s": 10,
                                        "think_ms": 0, "server": server},
                     {"received_per_s": (50.0 if server == "ws" else 90.0) * g,
                      "memory_per_user_bytes": 4000.0 if server == "none" else 40000.0,
                      **({"server_cpu_percent": 80.0, "loadgen_cpu_percent": 40.0,
                          "memory_per_connection_bytes": 30000.0, "connect_p99_ms": 2.0}
                         if server == "ws" else {})})
    points = [at("none", g, "chat-stress") for g in (10, 100)]
    points += [at("ws", g, "chat-server") for g in (10, 100)]
    items = section_of(doc_of(points), "chat")["items"]
    titles = [i["title"] for i in items]
    assert titles == ["chat, stress: Messages per second vs users",
                      "chat, stress: Memory per user vs users", "chat, stress: CPU vs users",
                      "chat, stress: Connection time vs users"]
    rate = items[0]
    assert [t["label"] for t in rate["traces"]] == [
        "erlang/default [server=none] received before T", "erlang/default [server=ws] received before T"]
    assert rate["traces"][1]["y"] == [50.0 * 10, 50.0 * 100]
    # One target, two kinds: one colour family, two shades, the same x (users).
    none, ws = rate["traces"]
    assert none["colour"] != ws["colour"] and none["target"] == ws["target"] == "erlang"
    assert none["x"] == ws["x"] == [100, 1000]
    memory = items[1]
    assert [t["label"] for t in memory["traces"]][-1] == "erlang/default [server=ws] per connection"
    assert memory["traces"][-1]["status"] == ["ok", "ok"]


def series_doc(samples_by_rep, with_summary=True):
    params = {"groups": 10, "clients_per_group": 10, "duration_s": 2, "think_ms": 0}
    measurements = [{"scenario": "chat-stress", "workload": "chat", "target": "erlang",
                     "variant": "default", "variant_label": "idiomatic", "params": params,
                     "sweep": "groups", "x": 10, "repetition": rep, "warmup": False,
                     "status": "ok", "error": None, "metrics": {"received_per_s": 1000.0},
                     "verify": {}, **({"series": samples} if samples is not None else {})}
                    for rep, samples in samples_by_rep.items()]
    run = {"id": "r", "measurements": measurements}
    return {"runs": [run]}


def test_chat_series_become_time_charts_one_per_unit_for_the_longest_repetition():
    short = [{"t_ms": 0.0, "rss_bytes": 1e6}]
    long = [{"t_ms": t * 1000.0, "rss_bytes": 1e6 * (t + 1),
             "erlang_memory_processes_bytes": 5e5 * (t + 1), "processes_count": 100 + t,
             "bogus": "text"} for t in range(3)]
    items = section_of(series_doc({1: long, 2: short}), "chat")["items"]
    charts = [i for i in items if "over time" in i["title"]]
    assert [c["title"] for c in charts] == ["erlang/default, 100 users: memory over time",
                                            "erlang/default, 100 users: count over time"]
    memory, count = charts
    assert memory["subtitle"].endswith("repetition 1")  # the longest series, not the last
    assert [t["label"] for t in memory["traces"]] == ["rss", "erlang_memory_processes"]
    assert memory["traces"][0]["x"] == [0.0, 1.0, 2.0]
    assert memory["traces"][1]["y"] == [5e5, 1e6, 1.5e6]
    assert memory["traces"][0]["colour"] != memory["traces"][1]["colour"]
    assert count["traces"][0]["y"] == [100, 101, 102]
    assert memory["row"] == count["row"]


def test_bytes_counted_since_the_start_are_not_drawn_as_memory():
    samples = [{"t_ms": t * 1000.0, "server_rss_bytes": 1e6, "server_erlang_io_in_bytes": 1e3 * t,
                "server_erlang_io_out_bytes": 2e3 * t, "server_allocated_bytes": 5e3 * t}
               for t in range(3)]
    items = section_of(series_doc({1: samples}), "chat")["items"]
    charts = {c["title"].split(": ")[-1]: c for c in items if "over time" in c["title"]}
    assert [t["label"] for t in charts["memory over time"]["traces"]] == ["server_rss"]
    so_far = charts["bytes so far over time"]
    assert [t["label"] for t in so_far["traces"]] == ["server_erlang_io_in", "server_erlang_io_out",
                                                      "server_allocated"]
    assert so_far["traces"][1]["y"] == [0.0, 2e3, 4e3]


def test_chat_series_are_read_tolerantly():
    for samples in (None, "not a list", [{"rss_bytes": 1}], [{"t_ms": "x", "rss_bytes": 1}]):
        items = section_of(series_doc({1: samples}), "chat")["items"]
        assert not [i for i in items if "over time" in i["title"]], samples


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
