"""Samples sized by time: the warm-up calibrates each point's work so that its timed
section lasts --min-time; the point keeps the parameters it was asked for."""

import pytest

from msgbench.cli import main
from msgbench.core import spec
from msgbench.data.store import Store
from msgbench.running import calibrate

# Calibration times real work against --min-time: run alone, after the parallel tests
# (make test-harness), so that other tests' load does not size its samples.
pytestmark = pytest.mark.alone

# The fake "paced" variant's laps take 1 ms of real time each: m=10 lasts 10 ms.
PACED = ["run", "ring", "--target", "fake", "--variant", "paced", "-p", "n=10", "-p", "m=10", "--repeat", "2",
         "--warmup", "0", "--no-build"]


def measured(store_path) -> list[dict]:
    store = Store(store_path)
    return store.measurements(store.runs()[0]["id"])


def test_factor_is_the_power_of_two_that_reaches_the_time():
    assert calibrate.factor(10e6, 0.2) == 32  # 10 ms -> 320 ms
    assert calibrate.factor(300e6, 0.2) == 1
    assert calibrate.factor(0, 0.2) == calibrate.MAX_FACTOR


def test_scaling_keeps_the_spec_maximum_and_the_swept_parameter():
    ring = spec.workload("ring")
    assert calibrate.scaled(ring, {"n": 10, "m": 10}, 32) == {"m": 320}
    assert calibrate.scaled(ring, {"n": 10, "m": 900_000_000}, 4) == {"m": 1_000_000_000}
    assert calibrate.applies(ring, sweep="n") and not calibrate.applies(ring, sweep="m")
    assert not calibrate.applies(spec.workload("chat"), sweep=None)  # its duration is the scenario's


def test_calibration_reaches_its_time_target_on_a_target_of_known_speed(fake_targets, capsys):
    assert main([*PACED, "--min-time", "0.2"]) == 0
    ms = measured(fake_targets)
    warmup, *timed = ms
    assert warmup["warmup"] and "calibrated" not in warmup["worker"]  # it calibrates: it runs as asked
    assert len(timed) == 2
    # 10 laps of 1 ms: x32 on a quiet machine; a busy one oversleeps each lap, and the
    # warm-up's own time decides (x16 beside make test's other work, x8 on a busier one).
    by = calibrate.factor(warmup["worker"]["measured"][spec.workload("ring").timed], 0.2)
    assert by in (8, 16, 32)
    for m in timed:
        assert m["params"]["m"] == 10  # the point as asked: compare and history match it
        assert m["worker"]["calibrated"] == {"m": 10 * by}
        assert 0.2e9 <= m["worker"]["measured"]["pass_wall_ns"] < 0.2e9 * 2.5
        assert m["verify"]["laps"] == 10 * by and m["status"] == "ok"  # verified against what ran
    out = capsys.readouterr().out
    assert f"each timed section calibrated to at least 0.2 s; 1 of 1 points given more work (x{by}" in out


def test_no_calibration_runs_the_work_as_asked(fake_targets, capsys):
    assert main([*PACED, "--min-time", "0"]) == 0
    assert all("calibrated" not in m["worker"] and m["verify"]["laps"] == 10 for m in measured(fake_targets))


@pytest.mark.parametrize("text", ["soon", "-1s", "4 minutes"])
def test_a_bad_time_is_one_clear_line(fake_targets, capsys, text):
    assert main([*PACED, f"--min-time={text}"]) == 2
    assert "is not a time" in capsys.readouterr().err


def test_a_budget_adds_repetitions_where_the_interval_is_widest_and_stops_in_time(fake_targets, monkeypatch):
    # The plain fake's passing time shrinks every repetition: its interval never closes,
    # so only the budget ends the run.
    # Two variants compared at one x: the budget takes an x whole (every target compared
    # there, the widest interval's x first), so the compared samples stay level.
    assert main(["run", "ring", "--target", "fake", "--variant", "ok,slow", "-p", "n=10", "-p", "m=1",
                 "--repeat", "3", "--warmup", "0", "--no-build", "--budget", "8s", "--max-repeat", "100"]) == 0
    store = Store(fake_targets)
    run = store.runs()[0]
    ms = [m for m in store.measurements(run["id"]) if not m["warmup"]]
    assert len(ms) > 6  # more than the planned 3 a point
    started, finished = (run[k] for k in ("created_at", "finished_at"))
    from datetime import datetime
    spent = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    assert spent <= 8 + 2  # within the budget, less the last repetition's overrun (seconds' rounding)
    by_variant = [sum(1 for m in ms if m["variant"] == v) for v in ("ok", "slow")]
    assert by_variant[0] == by_variant[1], by_variant  # kept level where compared
    assert Store(fake_targets).run(run["id"])["metadata"]["budget_s"] == 8


def test_metrics_that_grow_with_the_work_are_stored_for_the_work_asked(fake_targets):
    assert main([*PACED, "--min-time", "0.2"]) == 0
    for m in measured(fake_targets)[1:]:
        # The laps the calibration chose (320 of 1 ms on an idle machine; fewer when a
        # loaded one stretches them past --min-time sooner), as the measurement stores them.
        laps = m["worker"]["calibrated"]["m"]
        assert laps > 10
        ran_ms = m["worker"]["measured"]["pass_wall_ns"] / 1e6
        assert m["metrics"]["pass_wall_ms"] == pytest.approx(ran_ms * 10 / laps)  # the point asked: 10 laps
        assert m["metrics"]["hops_per_s"] == pytest.approx(10 * laps / (ran_ms / 1e3))  # a rate: as it ran
    ring = spec.workload("ring")
    assert calibrate.as_asked(ring, {"pass_wall_ms": 800.0, "create_wall_ms": 3.0}, {"m": 10}, {"m": 80}) == {
        "pass_wall_ms": 100.0, "create_wall_ms": 3.0}  # creation does not grow with the laps
