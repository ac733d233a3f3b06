"""The noise-floor probe: run before every run, stored with it, shown beside its results."""

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from msgbench.cli import main
from msgbench.data import results
from msgbench.data.store import Store
from msgbench.running import probe
from msgbench.views import report
from msgbench.workers import cpus

LIMITS_SOURCE = Path(__file__).parent.parent / "targets" / "c" / "src" / "limits.c"
RUN = ["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0", "--no-build"]


@pytest.fixture
def limits_binary(tmp_path, monkeypatch) -> Path:
    """targets/c's msgbench-limits, compiled from this checkout (the fake targets have no C target)."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not compiler:
        pytest.skip("needs a C compiler")
    path = tmp_path / "msgbench-limits"
    subprocess.run([compiler, "-std=c11", "-O2", "-pthread", "-o", str(path), str(LIMITS_SOURCE), "-lm"], check=True)
    monkeypatch.setattr(probe, "binary", lambda: path)
    return path


@pytest.mark.alone  # the probe's second of ping-pong is timed
def test_the_noise_floor_is_stored_with_the_run_and_shown(fake_targets, limits_binary, capsys):
    assert main(RUN) == 0
    out = capsys.readouterr().out
    store = Store(fake_targets)
    run_id = store.runs()[0]["id"]
    floor = store.run(run_id)["metadata"]["noise_floor"]
    assert floor["slices"] == probe.SLICES - 1 and floor["rate_per_s"] > 0 and 0 <= floor["cv"] < 5, floor
    assert 0.5 < floor["seconds"] < 1.5  # about a second of ping-pong, the warm-up slice left out
    measured = cpus.layout(cpus.PINNED).measured  # the run's default placement: the probe runs there too
    assert floor["cpus"] == (cpus.cpu_list(measured) if measured else "any")
    line = probe.line(floor)
    where = f" on CPU {floor['cpus']}" if measured else ""
    assert line.startswith(f"noise floor: pipe ping-pong{where} cv {floor['cv']:.1%} over 10 slices (")
    assert line in out  # beside the results of run
    assert main(["show", run_id]) == 0
    assert line in capsys.readouterr().out  # and of show
    page = report.render_html(results.run_document(store, [run_id]))
    assert f"<th>noise floor</th><td>{line.removeprefix('noise floor: ')}</td>" in page


def test_no_probe_skips_it_and_a_missing_program_is_said(fake_targets, limits_binary, capsys):
    assert main([*RUN, "--no-probe"]) == 0
    store = Store(fake_targets)
    assert "noise_floor" not in store.run(store.runs()[0]["id"])["metadata"]
    assert "noise floor" not in capsys.readouterr().out
    limits_binary.unlink()
    assert main(RUN) == 0
    assert f"noise floor: not measured ({limits_binary} is not built (make build))" in capsys.readouterr().out


@pytest.mark.parametrize("cv, verdict", [(0.008, "quiet"), (0.03, "some noise"), (0.09, "noisy: expect wide")])
def test_the_line_says_what_the_floor_means(cv, verdict):
    assert f"({verdict}" in probe.line({"cv": cv, "slices": 10, "rate_per_s": 1})


def test_two_runs_on_a_machine_that_changed_speed_say_so():
    quiet = {"rate_per_s": 400_000, "cv": 0.01, "cpus": "1"}
    assert probe.drift_line(quiet, quiet | {"rate_per_s": 392_000}) is None  # within 5%: the same machine
    line = probe.drift_line(quiet, quiet | {"rate_per_s": 320_000})
    assert line.startswith("the machine: its noise-floor probe ran 20% slower in B (400,000 vs 320,000 round "
                           "trips/s on CPU 1)")
    assert probe.drift_line(quiet, quiet | {"rate_per_s": 320_000, "cpus": "any"}) is None  # placed apart
    assert probe.drift_line(quiet, {"skipped": "not built"}) is None


def test_compare_says_when_the_machine_changed_between_the_runs(fake_targets, capsys):
    assert main(RUN) == 0 and main(RUN) == 0
    store = Store(fake_targets)
    first, second = sorted(r["id"] for r in store.runs())
    for run_id, rate in ((first, 400_000), (second, 300_000)):
        meta = store.run(run_id)["metadata"]
        meta["noise_floor"] = {"rate_per_s": rate, "cv": 0.01, "cpus": "1", "slices": 10}
        store.db.execute("UPDATE runs SET metadata = ? WHERE id = ?", (json.dumps(meta), run_id))
    store.db.commit()
    capsys.readouterr()
    main(["compare", first, second])
    assert "the machine: its noise-floor probe ran 25% slower in B" in capsys.readouterr().out
