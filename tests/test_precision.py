"""--precision: repetitions are added, interleaved, until each point is known well enough;
a point that does not get there within --max-repeat says so."""

from msgbench.cli import main
from msgbench.data.store import Store

RING = ["run", "ring", "--target", "fake", "-p", "n=10", "--sweep", "m=1,2", "--repeat", "3", "--warmup", "0",
        "--no-build"]


def measured(store_path) -> list[dict]:
    store = Store(store_path)
    return [m for m in store.measurements(store.runs()[0]["id"]) if not m["warmup"]]


def test_a_noisy_point_gets_more_repetitions_up_to_the_limit_and_says_it_did_not_converge(fake_targets, capsys):
    # The fake's passing time shrinks with each repetition: its rate never settles.
    assert main([*RING, "--precision", "2%", "--max-repeat", "6"]) == 0
    ms = measured(fake_targets)
    assert [m["repetition"] for m in ms if m["params"]["m"] == 1] == [1, 2, 3, 4, 5, 6]
    # Interleaved: the added rounds alternate between the two points, as the planned ones do.
    assert [m["params"]["m"] for m in ms][6:] == [1, 2, 1, 2, 1, 2]
    assert "precision not reached" in capsys.readouterr().out  # counted in the summary of warnings
    assert main(["show", "latest", "--warnings"]) == 0
    out = capsys.readouterr().out
    assert "did not converge" in out and "after 6 repetitions, asked ±2.0%" in out


def test_a_steady_point_stops_at_the_planned_repetitions(fake_targets, monkeypatch, capsys):
    monkeypatch.setenv("FAKE_STEADY", "1")
    assert main([*RING, "--precision", "2%", "--max-repeat", "6"]) == 0
    assert len(measured(fake_targets)) == 6  # 3 per point: already precise
    capsys.readouterr()
    assert main(["show", "latest", "--warnings"]) == 0
    assert "did not converge" not in capsys.readouterr().out


def test_precision_refusals(fake_targets, capsys):
    assert main([*RING, "--precision", "0%"]) == 2
    assert "--precision must be above 0%" in capsys.readouterr().err
    assert main([*RING, "--precision", "2%", "--max-repeat", "2"]) == 2
    assert "--max-repeat 2 is below the 3 repetitions planned" in capsys.readouterr().err


def test_a_timed_section_too_short_to_be_stable_is_said(fake_targets, monkeypatch, capsys):
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "3", "--warmup", "0",
                 "--no-build"]) == 0
    assert "timed section under 50 ms" in capsys.readouterr().out  # counted in the summary of warnings
    assert main(["show", "latest", "--warnings"]) == 0
    out = capsys.readouterr().out
    assert "pass_wall_ns: the timed section lasted" in out and "too short to be stable" in out
    monkeypatch.setenv("FAKE_SLOWDOWN", "100")  # 200 ms to pass the token
    assert main(["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "3", "--warmup", "0",
                 "--no-build"]) == 0
    assert "too short to be stable" not in capsys.readouterr().out
