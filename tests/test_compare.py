"""compare_runs: points matched by their parameters, labelled so a reader can tell them apart."""

from msgbench.compare import compare_runs


def _fanin(size: int, values: list[float]) -> list[dict]:
    params = {"senders": 4, "duration_ms": 200, "mix": [{"percent": 100, "kind": "message", "size": size}]}
    return [{"workload": "fanin", "target": "erlang", "variant": "default", "params": params,
             "sweep": "senders", "warmup": False, "status": "ok",
             "metrics": {"receive_throughput_per_s": v}} for v in values]


def test_points_that_differ_only_in_their_mix_get_different_labels():
    run_a = {"measurements": _fanin(1, [10, 11, 12, 13, 14]) + _fanin(100, [5, 5, 5, 5, 5])}
    run_b = {"measurements": _fanin(1, [20, 21, 22, 23, 24]) + _fanin(100, [5, 5, 5, 5, 5])}
    rows = compare_runs(run_a, run_b)
    labels = [row["point"] for row in rows]
    assert labels == ["senders=4 duration_ms=200 mix=100%message:1",
                      "senders=4 duration_ms=200 mix=100%message:100"]
    assert rows[0]["verdict"].startswith("B is better: +83.3%")
    assert rows[1]["verdict"].startswith("not significant")
