"""history --trend: a metric over the stored runs in time order, step changes marked."""

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.data.trend import trend


def run_cli(*args) -> int:
    return main(list(args))


RING = ("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "5", "--warmup", "0", "--no-build")


def test_a_step_is_marked_where_the_metric_moved_and_nowhere_else(fake_targets, monkeypatch, capsys):
    assert run_cli(*RING) == 0
    assert run_cli(*RING) == 0
    monkeypatch.setenv("FAKE_SLOWDOWN", "10")  # the third run is ten times slower
    assert run_cli(*RING) == 0
    (series,) = trend(Store(fake_targets), "ring")
    assert [e.step for e in series.entries] == [False, False, True]
    assert series.entries[2].change == -0.9
    capsys.readouterr()
    assert run_cli("history", "--trend", "ring", "--target", "fake") == 0
    out = capsys.readouterr().out
    assert "fake/ok n=10 m=10 payload=BOO!: hops_per_s (higher is better)" in out
    assert "-90.0%" in out and "step (p = 0.008)" in out and "p = 1.00" in out


def test_trend_filters_and_refusals(fake_targets, capsys):
    assert run_cli(*RING) == 0
    capsys.readouterr()
    assert run_cli("history", "--trend", "ring", "--target", "other") == 0
    assert "no stored run measured ring on other" in capsys.readouterr().out
    assert run_cli("history", "--trend", "ring", "--metric", "speed") == 2
    assert "metric 'speed' is not one of ring's" in capsys.readouterr().err
    assert run_cli("history", "--trend", "dance") == 2
    assert run_cli("history", "--metric", "hops_per_s") == 2
    assert "go with --trend" in capsys.readouterr().err
