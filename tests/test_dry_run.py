"""msgbench run --dry-run: the plan's points with what one repetition cost in earlier runs,
the planned total against the budget, and nothing measured or stored."""

import statistics

from msgbench.cli import main
from msgbench.data.store import Store


def test_a_dry_run_shows_each_points_cost_and_the_total_and_measures_nothing(fake_targets, capsys):
    ring = ["run", "ring", "--target", "fake", "--variant", "ok,slow", "-p", "n=10", "-p", "m=2", "--no-probe",
            "--no-build"]
    assert main([*ring, "--repeat", "2", "--warmup", "0"]) == 0
    before = Store(fake_targets).measurements(Store(fake_targets).resolve("latest"))
    capsys.readouterr()
    assert main([*ring, "--repeat", "3", "--warmup", "1", "--budget", "1s", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["point", "repetitions", "each", "point", "total"]
    rows = {line.split()[1]: line.split() for line in out[1:3]}  # ring fake/ok 4 0.4 s 2 s
    assert set(rows) == {"fake/ok", "fake/slow"} and all(r[2] == "4" for r in rows.values())
    for variant, row in rows.items():  # the median of its two earlier repetitions' worker wall times
        walls = [m["worker"]["wall_s"] for m in before if f"fake/{m['variant']}" == variant]
        assert row[3] == f"{statistics.median(walls):.1f}"
    assert out[3].startswith("planned: 2 points, ") and "budget 1 s" in out[3]
    assert len(Store(fake_targets).runs()) == 1  # nothing stored


def test_a_point_never_measured_is_counted_not_guessed(fake_targets, capsys):
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--no-build", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "never measured" in out[1]
    assert out[-1] == "planned: 1 points, 0 s of repetitions and 1 point never measured"
