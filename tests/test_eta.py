"""Before a run: how long it should take, from the worker wall times of the same points in
earlier runs; points never measured are counted, not guessed."""

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.running import eta, suites
from msgbench.running.runner import plan_run


def _plan(repeat: int, warmup: int, ns=(10,)):
    scenario = suites.Scenario("ring", "ring", {"m": 10}, sweep="n", values=tuple(ns), targets=("fake",))
    return plan_run([scenario], ["fake"], None, repeat, warmup, 30.0, strict_targets=True)


def test_the_estimate_is_the_earlier_wall_times_times_the_repetitions(fake_targets):
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "3", "--warmup", "0",
                 "--no-build"]) == 0
    store = Store(fake_targets)
    walls = sorted(m["worker"]["wall_s"] for m in store.measurements(store.runs()[0]["id"]))
    guess = eta.estimate(_plan(repeat=5, warmup=1, ns=(10, 20)).jobs, store)
    assert (guess.known, guess.unknown) == (1, 1)  # n=20 was never measured
    assert abs(guess.seconds - walls[1] * 6) < 1e-9  # the median, times 5 repetitions and 1 warm-up
    assert guess.text().startswith("about ") and guess.text().endswith("; 1 point never measured)")


def test_no_earlier_run_no_estimate(fake_targets):
    guess = eta.estimate(_plan(repeat=5, warmup=1).jobs, Store(fake_targets))
    assert guess.known == 0 and guess.text() == ""


def test_run_says_the_estimate_when_worth_it(fake_targets, capsys, monkeypatch):
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                 "--no-build"]) == 0
    capsys.readouterr()
    monkeypatch.setattr(eta, "WORTH_SAYING_S", 0.0)
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                 "--no-build"]) == 0
    assert "msgbench: about " in capsys.readouterr().err
