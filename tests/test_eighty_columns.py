"""At 80 columns (a real terminal: a tmux pane, captured) run, show, compare and check
fit by choosing columns, never by cutting a figure short; --wide shows every column
whole; numbers are never written as 1e+03."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from msgbench.cli import main
from msgbench.core import units
from msgbench.data import results
from msgbench.views import tables
from tests.conftest import FIXTURE_TARGETS
from tests.report.report_fixtures import make_doc

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def in_tmux(args: list[str], env: dict, width: int = 80) -> str:
    """The pane of a width-column terminal after `python -m msgbench ARGS` ran in it (without
    COLUMNS, which a tmux server started from a test run inherits and rich would believe)."""
    session = f"mb-{uuid.uuid4().hex[:8]}"
    marker = "EXITED-" + session
    command = " ".join([sys.executable, "-m", "msgbench", *args])
    exports = " ".join(f"{k}={v}" for k, v in env.items())
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", str(width), "-y", "400",
                    f"cd {ROOT} && env -u COLUMNS -u LINES {exports} {command}; echo {marker}; sleep 120"], check=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            pane = subprocess.run(["tmux", "capture-pane", "-p", "-t", session, "-S", "-", "-E", "-"],
                                  capture_output=True, text=True, check=True).stdout
            if marker in pane:
                return pane.split(marker)[0]
            time.sleep(0.5)
        raise AssertionError(f"msgbench {' '.join(args)} did not finish in the pane")
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], check=False)


@pytest.fixture
def store(tmp_path, monkeypatch):
    """Two runs of the report's fixture, without their failed and n/a points (which check
    refuses to pass over; show's n/a and FAILED rows are tests/test_outputs.py's)."""
    made = make_doc(runs=2, with_more=True)
    for run in made["runs"]:
        run["measurements"] = [m for m in run["measurements"] if m["status"] == "ok"]
        run["summary"] = results.summarize_run(run["measurements"])
    doc = tmp_path / "doc.json"
    doc.write_text(json.dumps(made))
    path = tmp_path / "store.sqlite"
    monkeypatch.setenv("MSGBENCH_STORE", str(path))
    assert main(["import", str(doc)]) == 0
    return path


def _plain(args: list[str], store: Path) -> str:
    env = dict(os.environ, MSGBENCH_STORE=str(store))
    return subprocess.run([sys.executable, "-m", "msgbench", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True).stdout


def _figures(text: str) -> set[str]:
    """Every number with its SI suffix in the text: what must survive at 80 columns."""
    return set(re.findall(r"(?<![\w.])\d+(?:\.\d+)?[kMG]?(?![\w.])", text))


@pytest.mark.parametrize("args", [["show", "20261122"], ["compare", "20261122", "20261123"],
                                  ["check", "20261122", "20261123"]])
def test_show_compare_and_check_fit_80_columns_without_cutting_a_figure(store, args):
    pane = in_tmux(args, {"MSGBENCH_STORE": store})
    assert max(len(line) for line in pane.splitlines()) <= 80
    assert "…" not in pane
    # Every median of the full table is in the pane, whole.
    plain = _plain(args, store)
    medians = {m for line in plain.splitlines() for m in re.findall(r"\b\d+(?:\.\d+)?[kMG]\b", line)}
    assert medians and medians <= _figures(pane)


def test_wide_is_never_cut(store):
    pane = in_tmux(["show", "20261122", "--wide"], {"MSGBENCH_STORE": store})
    joined = pane.replace("\n", "")  # the terminal wraps the long lines: every cell is still there
    assert "…" not in pane and "mix=50%exit_signal:10+50%message:10" in joined


def test_a_narrow_show_says_which_columns_it_left_out(store):
    pane = in_tmux(["show", "20261122"], {"MSGBENCH_STORE": store}, width=60)
    assert "…" not in pane
    assert "left out to fit 60 columns; --wide shows every column)" in " ".join(pane.split())


def test_a_run_fits_80_columns(tmp_path):
    env = {"MSGBENCH_STORE": tmp_path / "store.sqlite", "MSGBENCH_TARGETS_DIR": FIXTURE_TARGETS,
           "MSGBENCH_BUILDS_DIR": tmp_path / "builds"}
    pane = in_tmux(["run", "ring", "--target", "fake", "--variant", "ok,slow", "-p", "n=10", "--sweep",
                    "m=10,20", "--repeat", "2", "--warmup", "0", "--no-build"], env)
    assert "fake/ok" in pane and "fake/slow" in pane
    assert max(len(line) for line in pane.splitlines()) <= 80 and "…" not in pane


def test_columns_are_left_out_before_a_figure_is_cut():
    rows = [["scenario-with-a-long-name", "erlang/default", "ok", "123.4M", "999.9k", "12.5%", "5"]]
    table = tables.Table(["scenario", "target/variant", "status", "msg/s", "sent/s", "cv", "n"], rows,
                         wrap={"scenario"}, optional=("n", "cv", "sent/s"))
    shown, dropped = tables.fit(table, 62)
    assert dropped == ["n", "cv"] and "123.4M" in tables.text(shown)
    assert tables.column_widths(shown, 62) is not None and tables.column_widths(table, 62) is None
    assert tables.column_widths(table.without(["n", "cv", "sent/s"]), 20) is None  # figures never shrink


@pytest.mark.parametrize("value, shown", [(999.9, "1k"), (999.4, "999"), (999_950, "1M"), (0.99999, "1"),
                                          (12_345, "12.3k"), (999.96e6, "1G")])
def test_numbers_are_always_in_engineering_form(value, shown):
    assert units.number(value) == shown
    assert "e+" not in units.duration_us(value) and "e+" not in units.megabytes(value * 1e6)
    assert units.megabytes(12_345e6) == "12,345" and units.duration_us(999.9) == "1 ms"
