from msgbench.views.workloads import chat as seed_chat
from msgbench.views.workloads import ring as seed_ring


def test_chat_block_is_the_seeds_with_the_drain_said_after_it():
    metrics = {"sent_count": 528704, "received_count": 528704, "received_in_window_count": 506096,
               "sent_per_s": 52870.4,
               "received_per_s": 50609.6, "sent_per_group_count": 52870.4,
               "received_per_group_count": 50609.6, "sent_per_client_count": 10574.08,
               "received_per_client_count": 10121.92, "sent_per_client_per_s": 1057.408,
               "received_per_client_per_s": 1012.192}
    m = {"params": {"groups": 10, "clients_per_group": 5, "duration_s": 10}, "metrics": metrics,
         "status": "ok", "error": None}
    assert seed_chat.measurement_block(m) == (
        "G:10    CPG:5   T:10\n"
        "Sent: 528704\n"
        "Received: 506096\n"
        "Average sent per second: 52870.4\n"
        "Average received per second: 50609.6\n"
        "Average sent per group: 52870.4\n"
        "Average received per group: 50609.6\n"
        "Average sent per client: 10574.08\n"
        "Average received per client: 10121.92\n"
        "Average sent per client per second: 1057.408\n"
        "Average received per client per second: 1012.192\n"
        "(after T, in the drain: 22608 more received; 528704 in all)\n"
    )


def test_failed_measurements_say_so_in_the_seed_form():
    m = {"params": {"n": 10, "m": 1, "payload": "BOO!", "groups": 1, "clients_per_group": 2,
                    "duration_s": 1}, "metrics": {}, "status": "timeout", "error": "killed"}
    assert "TIMEOUT: killed" in seed_ring.measurement_block(m)
    assert "TIMEOUT: killed" in seed_chat.measurement_block(m)


def test_ring_tables_show_n_by_m_and_mark_failures():
    def point(n, m, ms, status="ok"):
        metrics = {"create_wall_ms": {"median": n / 1000}, "pass_wall_ms": {"median": ms}} if status == "ok" else {}
        return {"workload": "ring", "target": "erlang", "variant": "default", "params": {"n": n, "m": m},
                "metrics": metrics, "status": status}
    text = seed_ring.run_tables([point(1000, 1, 2.0), point(1000, 5, 9.6), point(5000, 1, 11.0),
                                 point(5000, 5, 0, status="timeout")])
    assert "Processes" in text and "Creation Time (ms)" in text
    assert "5,000" in text and "failed" in text
