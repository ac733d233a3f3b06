"""Runs from the Erlang/OTP benchmark page's `$` format, for `msgbench import`.

The format carries one number per label and process count (the run's figure, no
repetitions, no verification counts), so an imported row becomes one measurement per
process count whose verify is empty; the run's notes say where it came from.

Several runs pasted one after another (the suite run twice, both labelled with the
same release) become as many runs: the k-th row of a label in a graph is that label's
k-th run (otp.runs_of), as the OTP page keeps them apart.
"""

from msgbench.data.store import new_run_ids, now_iso
from msgbench.views.formats import otp

_METRIC = {"send": "send_throughput_per_s", "receive": "receive_throughput_per_s"}


def runs_from_text(text: str, source: str) -> list[dict]:
    graphs = otp.parse(text)
    runs: dict[int, dict[tuple, dict]] = {}
    for graph, numbers in zip(graphs, otp.runs_of(graphs), strict=True):
        if graph["throughput"] is None:
            raise otp.ParseError(graph["line"], 1, "cannot read this Scenario line: expected "
                                 "'Scenario: Send Throughput, send_duration=N ms, ...'")
        for row, number in zip(graph["rows"], numbers, strict=True):
            target, _, variant = row["label"].partition("/")
            points = runs.setdefault(number, {})
            for senders, value, status in zip(graph["x"], row["values"], row["status"], strict=True):
                key = (row["label"], graph["duration_ms"], repr(graph["mix"]), graph["spawn_options"], senders)
                point = points.setdefault(key, _measurement(graph, target, variant, senders))
                if value is not None:
                    point["metrics"][_METRIC[graph["throughput"]]] = value
                elif status:
                    point["status"], point["error"] = status, f"{status} in {source}"
    found = []
    ids = new_run_ids(len(runs))  # distinct however many runs one paste holds
    for (number, points), run_id in zip(sorted(runs.items()), ids, strict=True):
        which = f" (run {number} of {len(runs)} in it)" if len(runs) > 1 else ""
        found.append({
            "id": run_id, "created_at": now_iso(), "finished_at": now_iso(), "status": "complete",
            "command": f"msgbench import {source}", "suite": None,
            "notes": [f"imported from the Erlang/OTP benchmark format in {source}{which}: one figure per point, "
                      "no repetitions and no verification counts"],
            "metadata": {}, "measurements": list(points.values()),
        })
    return found


def _measurement(graph: dict, target: str, variant: str, senders: int) -> dict:
    return {
        "scenario": "fanin", "workload": "fanin", "target": target or "unknown",
        "variant": variant or "default", "variant_label": "idiomatic",
        "params": {"senders": senders, "duration_ms": graph["duration_ms"], "mix": graph["mix"],
                   "method": "otp", "memory_limit_mb": 8192},
        "sweep": "senders", "x": senders, "repetition": 1, "warmup": False, "status": "ok",
        "error": None, "metrics": {}, "verify": {}, "extra": {"spawn_options": graph["spawn_options"]},
    }
