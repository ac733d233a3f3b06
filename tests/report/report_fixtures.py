"""Results documents generated in code, shaped like real runs.

Several targets and variants, warm-ups, three repetitions per point, a failed point
(a timeout), an unsupported one (exit signals in Go), a workload without a report
module (socket) and, optionally, a second run of the same scenarios.
"""

import random

from msgbench.data import results

RING_NS = (1000, 5000, 10000, 50000, 100000)
RING_MS = (10, 100)
FANIN_SENDERS = (1, 2, 4, 8, 16)
MESSAGE_1 = [{"percent": 100, "kind": "message", "size": 1}]
MIXED_10 = [{"percent": 50, "kind": "exit_signal", "size": 10},
            {"percent": 50, "kind": "message", "size": 10}]
UNSUPPORTED = "exit signals are an Erlang notion; go has no equivalent"
VERIFY_FAILED = "verify: received_message == sent_message does not hold"
# Per-target speed factors: (ring seconds per hop, ring ms per spawn, fanin msgs/s per sender)
SPEED = {"erlang": (1.4e-7, 0.0035, 2.9e6), "go": (2.2e-7, 0.0009, 4.1e6),
         "c": (6.0e-7, 0.012, 1.6e6)}


def measurement(run_id, scenario, workload, target, variant, params, sweep, rep, warmup,
                status="ok", metrics=None, verify=None, error=None, label="idiomatic"):
    return {
        "scenario": scenario, "workload": workload, "target": target, "variant": variant,
        "variant_label": label, "params": params, "sweep": sweep,
        "x": params.get(sweep) if sweep else None, "repetition": rep, "warmup": warmup,
        "status": status, "error": error, "metrics": metrics or {}, "verify": verify or {},
        "runtime_version": f"{target} 1.0", "started_at": "2026-11-22T05:15:01+00:00",
        "worker": {"wall_s": 0.4, "max_rss_bytes": 61440000, "exit_code": 0},
    }


def ring_measurements(rng, run_id, slow=1.0):
    out = []
    for target in ("erlang", "go", "c"):
        per_hop, per_spawn, _ = SPEED[target]
        for m in RING_MS:
            for n in RING_NS:
                params = {"n": n, "m": m, "payload": "BOO!"}
                for rep in range(4):  # repetition 0 is the warm-up
                    if target == "c" and n == 100000 and m == 100:
                        out.append(measurement(run_id, "ring", "ring", target, "default", params,
                                               "n", rep, rep == 0, status="timeout",
                                               error="worker still running after 60 s"))
                        continue
                    noise = rng.uniform(0.93, 1.07) * slow * (1.3 if rep == 0 else 1.0)
                    pass_ms = n * m * per_hop * 1000 * noise
                    create_ms = n * per_spawn * noise
                    metrics = {
                        "create_wall_ms": create_ms, "create_cpu_ms": create_ms * 0.9,
                        "pass_wall_ms": pass_ms, "pass_cpu_ms": pass_ms * 0.98,
                        "hops_per_s": n * m / (pass_ms / 1000),
                        "spawns_per_s": n / (create_ms / 1000), "peak_rss_bytes": 30e6 + n * 2600}
                    out.append(measurement(run_id, "ring", "ring", target, "default", params, "n",
                                           rep, rep == 0, metrics=metrics,
                                           verify={"hops": n * m, "laps": m, "links": n}))
    return out


def fanin_measurements(rng, run_id, slow=1.0):
    out = []
    for mix_name, mix in (("fanin-message-1", MESSAGE_1), ("fanin-mixed-10", MIXED_10)):
        for target, variant in (("erlang", "default"), ("go", "default"), ("c", "default")):
            for senders in FANIN_SENDERS:
                params = {"senders": senders, "duration_ms": 1000, "mix": mix,
                          "method": "msgbench", "memory_limit_mb": 8192}
                for rep in range(4):
                    warm = rep == 0
                    point = (run_id, mix_name, "fanin", target, variant, params, "senders",
                             rep, warm)
                    if target == "go" and mix is MIXED_10:
                        out.append(measurement(*point, status="unsupported", error=UNSUPPORTED))
                        continue
                    if target == "c" and senders == 16 and mix is MESSAGE_1:
                        out.append(measurement(*point, status="failed", error=VERIFY_FAILED))
                        continue
                    base = SPEED[target][2] / slow / (3 if mix is MIXED_10 else 1)
                    send = base * min(senders, 4) ** 0.7 * rng.uniform(0.9, 1.1)
                    receive = send * rng.uniform(0.35, 0.6)
                    metrics = {
                        "send_throughput_per_s": send, "receive_throughput_per_s": receive,
                        "send_duration_ms": 1000.0, "receive_duration_ms": 1000 * send / receive,
                        "drain_ms": 1000 * (send / receive - 1), "cpu_ms": 1900.0,
                        "peak_rss_bytes": 80e6 + senders * 1e6}
                    out.append(measurement(*point, metrics=metrics, verify={
                        "sent_message": int(send), "received_message": int(send)}))
    return out


def socket_measurements(rng, run_id):
    """socket echo: round trip and the bandwidth it implies (the spec's primary metric)."""
    out = []
    for size in (64, 1024, 16384, 262144):
        for rep in range(1, 4):
            rtt = 20 + size / 500 * rng.uniform(0.9, 1.1)
            params = {"mode": "echo", "size": size, "sockets": 1}
            out.append(measurement(run_id, "socket-echo", "socket", "erlang", "default", params,
                                   "size", rep, False,
                                   metrics={"round_trip_us": rtt, "msgs_per_s": 1e6 / rtt,
                                            "bandwidth_bytes_per_s": size * 1e6 / rtt}))
    return out


def pubsub_measurements(rng, run_id):
    """Seed 001's shape: message rate falls and payload rate rises with payload size."""
    out = []
    for threads in (1, 2):
        for size in (16, 64, 256, 1024, 4096, 16384):
            for rep in range(1, 4):
                rate = min(2.0e6 * threads, 1.2e8 / size) * rng.uniform(0.95, 1.05)
                params = {"payload_bytes": size, "sources": 1, "source_threads": threads,
                          "receivers": 1, "batching_bytes": 8192}
                metrics = {"msgs_per_s": rate, "payload_bits_per_s": rate * size * 8, "loss": 0}
                out.append(measurement(run_id, "pubsub-tcp", "pubsub", "tcp", "default", params,
                                       "payload_bytes", rep, False, metrics=metrics))
    return out


def chat_measurements(rng, run_id):
    out = []
    for groups in (10, 100, 750):
        for rep in range(1, 4):
            users = groups * 10
            sent = 60000 * rng.uniform(0.9, 1.1)
            params = {"groups": groups, "clients_per_group": 10, "duration_s": 10, "think_ms": 0}
            metrics = {"sent_per_s": sent, "received_per_s": sent * 0.9,
                       "sent_per_client_per_s": sent / users,
                       "received_per_client_per_s": sent * 0.9 / users,
                       "latency_p50_us": 40.0 * groups, "latency_p99_us": 400.0 * groups,
                       "latency_max_us": 900.0 * groups,
                       "peak_rss_bytes": 2e7 + users * 4e3}
            out.append(measurement(run_id, "chat-stress", "chat", "erlang", "default", params,
                                   "groups", rep, False, metrics=metrics))
    return out


def make_run(run_id, seed=1, slow=1.0, with_socket=True, with_more=False):
    rng = random.Random(seed)
    measurements = ring_measurements(rng, run_id, slow) + fanin_measurements(rng, run_id, slow)
    if with_socket:
        measurements += socket_measurements(rng, run_id)
    if with_more:
        measurements += pubsub_measurements(rng, run_id) + chat_measurements(rng, run_id)
    return {
        "id": run_id, "created_at": "2026-11-22T05:15:00+00:00",
        "finished_at": "2026-11-22T05:26:10+00:00", "status": "complete",
        "command": f"msgbench run --suite quick  # {run_id}", "suite": "quick",
        "notes": ["m scaled down 100x from the seed's grid to fit a 10-minute budget"],
        "metadata": {"host": "bench-1", "cpu_model": "AMD EPYC 7B13", "cores": 2,
                     "memory_bytes": 25769803776, "kernel": "Linux 6.1.0 x86_64",
                     "os": "Debian 12", "python": "3.11.7", "git_revision": "abc123 (dirty)",
                     "msgbench_version": "0.1.0",
                     "runtimes": {"erlang": "Erlang/OTP 25 [erts-13.1.5]", "go": "go1.26.8",
                                  "c": "gcc 12.2.0"}},
        "measurements": measurements,
        "summary": results.summarize_run(measurements),
    }


def make_doc(runs=1, with_socket=True, with_more=False):
    """with_more adds pubsub and chat, so every workload of the design has a section."""
    ids = ["20261122-051500-3f9a", "20261123-090000-b71c"]
    return {"format": "msgbench-results", "version": 1,
            "runs": [make_run(ids[i], seed=i + 1, slow=1.0 + 0.25 * i, with_socket=with_socket,
                              with_more=with_more)
                     for i in range(runs)]}
