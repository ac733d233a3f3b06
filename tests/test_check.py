"""check's three outcomes and their exit codes (no regression 0, regression 1,
inconclusive 3, saying the smallest change the data could detect), and the errors
(exit 2, one line): a candidate without a baseline point, a candidate whose
repetitions all failed, a --metric no compared workload has. Every compare and check
ends with a short answer per point from the same judgement."""

import pytest

from msgbench.cli import main
from msgbench.data import verdict
from msgbench.data.store import Store

FANIN = {"senders": 4, "duration_ms": 200, "mix": [{"percent": 100, "kind": "message", "size": 1}]}


def _store_run(store: Store, values: list[float | None], target: str = "erlang", params: dict = FANIN) -> str:
    """A run of one fanin point: one repetition per value, None a failed one."""
    run_id = store.start_run("test", None, {}, [])
    for index, value in enumerate(values):
        ok = value is not None
        store.add_measurement(run_id, {
            "scenario": "fanin", "workload": "fanin", "target": target, "variant": "default",
            "variant_label": "default",
            "params": params, "sweep": "senders", "x": 4, "repetition": index, "warmup": False,
            "status": "ok" if ok else "timeout", "error": None if ok else "timed out",
            "metrics": {"receive_throughput_per_s": value} if ok else {}, "verify": {}})
    store.finish_run(run_id, "complete")
    return run_id


@pytest.fixture
def store(tmp_path, monkeypatch):
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("MSGBENCH_STORE", str(path))
    return Store(path)


STEADY = [100, 100.5, 101, 101.5, 102, 100.2, 101.2]


@pytest.mark.parametrize("candidate, code, says", [
    ([v * 0.7 for v in STEADY], 1, "check: regression: 1 of 1 points significantly worse by more than 5.0%"),
    ([v * 1.3 for v in STEADY], 0, "check: no regression"),
    (list(STEADY), 0, "check: no regression"),
    # Wide: 59% down at the median but the spread hides a 5% change.
    ([30, 41, 160, 35, 150, 38, 170], 3, "check: inconclusive: 1 of 1 points cannot show a 5.0% slowdown: "
                                         "their repetitions could detect only a change of about"),
])
def test_check_has_three_outcomes_each_its_exit_code(store, capsys, candidate, code, says):
    base, cand = _store_run(store, STEADY), _store_run(store, candidate)
    assert main(["check", base, cand, "--max-slowdown", "5%"]) == code
    out = capsys.readouterr().out
    assert says in out
    assert "fanin senders=4" in out.split("\n\n")[-2]  # the short answer per point before the outcome


def test_too_few_repetitions_are_inconclusive_and_say_how_many_are_needed(store, capsys):
    base, cand = _store_run(store, [100, 101, 102]), _store_run(store, [50, 51, 52])
    assert main(["check", base, cand]) == 3
    out = capsys.readouterr().out
    assert "inconclusive: too few repetitions (3 a side can never reach p<0.05)" in out
    assert "could detect no change at all" in out and "repeat at least 4 times a side" in out


def test_a_candidate_whose_repetitions_all_failed_is_an_error(store, capsys):
    base, cand = _store_run(store, STEADY), _store_run(store, [None] * 5)
    assert main(["check", base, cand]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "candidate B has no successful repetition of receive_throughput_per_s" in err and "timeout" in err


def test_a_candidate_missing_a_baseline_point_is_an_error(store, capsys):
    base = _store_run(store, STEADY)
    run_id = base
    for index, value in enumerate(STEADY):  # the baseline also measured go
        store.add_measurement(run_id, {
            "scenario": "fanin", "workload": "fanin", "target": "go", "variant": "default",
            "variant_label": "default", "params": FANIN,
            "sweep": "senders", "x": 4, "repetition": index, "warmup": False, "status": "ok",
            "metrics": {"receive_throughput_per_s": value}, "verify": {}})
    cand = _store_run(store, STEADY)
    assert main(["check", base, cand]) == 2
    assert "candidate B did not measure 1 of the baseline's points (fanin go/default" in capsys.readouterr().err


def test_an_unknown_metric_is_an_error_naming_it_and_what_is_accepted(store, capsys):
    base, cand = _store_run(store, STEADY), _store_run(store, STEADY)
    for command in ("check", "compare"):
        assert main([command, base, cand, "--metric", "receive_throughput"]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1
        assert "--metric 'receive_throughput' is no metric of fanin" in err
        assert "did you mean receive_throughput_per_s?" in err and "accepted: " in err


def test_compare_ends_with_the_short_answer(store, capsys):
    base, cand = _store_run(store, STEADY), _store_run(store, [v * 1.25 for v in STEADY])
    assert main(["compare", base, cand]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("fanin senders=4 ")
    assert "erlang/default: B ran 1.25 ± 0.01 times faster than A (receive_throughput_per_s, p = " in last


def test_the_judgement_names_a_leader_only_when_significant():
    steady = list(STEADY)
    leads = verdict.judge("rust", [v * 1.25 for v in steady], "go", steady, "higher", "hops_per_s")
    assert leads.outcome == verdict.LEADS and leads.leader == "rust"
    assert leads.text.startswith("rust ran 1.25 ± 0.01 times faster than go")
    lower = verdict.judge("rust", [v * 1.25 for v in steady], "go", steady, "lower", "round_trip_us")
    assert lower.leader == "go" and lower.text.startswith("go ran 1.25 ± 0.01 times faster than rust")
    same = verdict.judge("rust", steady, "go", steady[::-1], "higher", "hops_per_s")
    assert same.outcome == verdict.SAME and same.text.startswith("no significant difference")
    noisy = verdict.judge("rust", [60, 90, 130, 100, 150], "go", [100, 101, 99, 100, 102], "higher")
    assert noisy.outcome == verdict.INCONCLUSIVE and noisy.text.startswith("inconclusive: cv ")
    few = verdict.judge("rust", [200, 201, 202], "go", [1, 2, 3], "higher")
    assert few.outcome == verdict.INCONCLUSIVE and not few.leader
    assert few.text == "inconclusive: too few repetitions (3 a side can never reach p<0.05)"
