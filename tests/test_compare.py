"""compare and check: points matched by their parameters (and build), labelled so a reader
can tell them apart, with a verdict a CI gate can act on."""

import pytest

from msgbench.data.compare import compare, compare_builds, compare_runs, regressions, side


def _fanin(size: int, values: list[float], build: str = "") -> list[dict]:
    params = {"senders": 4, "duration_ms": 200, "mix": [{"percent": 100, "kind": "message", "size": size}]}
    return [{"workload": "fanin", "target": "erlang", "build": build, "variant": "default", "params": params,
             "sweep": "senders", "warmup": False, "status": "ok",
             "metrics": {"receive_throughput_per_s": v}} for v in values]


def test_points_that_differ_only_in_their_mix_get_different_labels():
    run_a = {"measurements": _fanin(1, [10, 11, 12, 13, 14]) + _fanin(100, [5, 5, 5, 5, 5])}
    run_b = {"measurements": _fanin(1, [20, 21, 22, 23, 24]) + _fanin(100, [5, 5, 5, 5, 5])}
    rows = compare_runs(run_a, run_b)
    labels = [row["point"] for row in rows]
    assert labels == ["senders=4 duration_ms=200 mix=100%message:1",
                      "senders=4 duration_ms=200 mix=100%message:100"]
    assert rows[0]["verdict"] == "B is 83.3% better: receive_throughput_per_s +83.3% (p = 0.008)"
    assert rows[1]["verdict"].startswith("no significant difference")


def test_builds_of_one_run_are_compared_with_the_first():
    run = {"id": "r1", "measurements": _fanin(1, [10, 11, 12, 13, 14], "otp25")
           + _fanin(1, [9, 10, 10.5, 11, 11.5], "branch") + _fanin(1, [20, 21, 22, 23, 24], "fast")}
    rows = compare_builds(run)
    assert [(r["a"], r["b"]) for r in rows] == [("otp25", "branch"), ("otp25", "fast")]
    assert rows[0]["verdict"].startswith("inconclusive: cv 13% for otp25")  # 10..14: too wide to say
    assert rows[1]["verdict"].startswith("fast is 83.3% better")
    assert rows[0]["target"] == "erlang"  # the point, whichever build


@pytest.mark.parametrize("candidate, failing", [
    ([7, 7.5, 8, 8.5, 9], 1),              # 33% slower, p < 0.05: fails a 5% gate
    ([11.5, 11.6, 12.1, 12.4, 12.9], 0),   # within the noise: passes
    ([20, 21, 22, 23, 24], 0),             # faster: passes
])
def test_check_fails_only_on_a_significant_slowdown_beyond_the_threshold(candidate, failing):
    base = side({"measurements": _fanin(1, [10, 11, 12, 13, 14])}, name="base")
    cand = side({"measurements": _fanin(1, candidate)}, name="cand")
    assert len(regressions(compare(base, cand), 0.05)) == failing


def test_a_slowdown_below_the_threshold_passes_even_when_significant():
    base = side({"measurements": _fanin(1, [100, 100.5, 101, 101.5, 102])}, name="base")
    cand = side({"measurements": _fanin(1, [97, 97.5, 98, 98.5, 99])}, name="cand")  # 3% slower
    rows = compare(base, cand)
    assert rows[0]["significant"]
    assert regressions(rows, 0.05) == [] and len(regressions(rows, 0.02)) == 1


def test_lower_is_better_metrics_count_a_rise_as_the_slowdown():
    def echo(values):
        params = {"mode": "echo", "size": 64}
        return [{"workload": "socket", "target": "c", "variant": "default", "params": params, "warmup": False,
                 "status": "ok", "metrics": {"round_trip_us": v}} for v in values]
    rows = compare(side({"measurements": echo([10, 10.1, 10.2, 10.3, 10.4])}, name="a"),
                   side({"measurements": echo([12, 12.1, 12.2, 12.3, 12.4])}, name="b"), "round_trip_us")
    assert rows[0]["worse_by"] == pytest.approx(0.196, abs=0.01)
    assert len(regressions(rows, 0.05)) == 1


def test_too_few_repetitions_are_said_to_be_unable_to_differ():
    # 3 against 3, every value of B above every value of A: the smallest p there is, 0.1
    rows = compare_runs({"measurements": _fanin(1, [10, 11, 12])}, {"measurements": _fanin(1, [20, 21, 22])})
    assert rows[0]["p_value"] == pytest.approx(0.1)
    assert rows[0]["verdict"] == "inconclusive: too few repetitions (3 a side can never reach p<0.05)"
    rows = compare_runs({"measurements": _fanin(1, [10, 11, 12, 13])}, {"measurements": _fanin(1, [20, 21, 22, 23])})
    assert rows[0]["verdict"].startswith("B is")  # 4 against 4 can: p = 2/70


def test_several_verdicts_on_one_line_each_name_their_pair():
    # A builds run judges each target's build against the first: "inconclusive" six times
    # over says nothing unless each says which pair it is.
    from msgbench.data import verdict
    from msgbench.views.report.findings import Finding

    few = verdict.judge("java@new", [1.0], "java@old", [1.1], "higher", "hops_per_s")
    same = verdict.judge("go@new", [1.0, 1.1, 0.9, 1.0, 1.05], "go@old", [1.02, 1.08, 0.95, 1.0, 1.01], "higher")
    assert few.pair == "java@new vs java@old" and few.named_text.startswith("java@new vs java@old: inconclusive")
    finding = Finding("ring", "ring", "hops_per_s", "higher", judgements=[few, same])
    assert finding.answer() == (f"java@new vs java@old: {few.text}; go@new vs go@old: {same.text}")
    # One verdict too: "no significant difference" alone does not say between whom.
    alone = Finding("ring", "ring", "hops_per_s", "higher", judgements=[same])
    assert alone.answer() == f"go@new vs go@old: {same.text}"
