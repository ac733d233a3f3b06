"""A store written before the thin worker contract still shows, exports and compares."""

import shutil
from pathlib import Path

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.views.formats import registry

OLD_STORE = Path(__file__).parent / "fixtures" / "stores" / "before-thin-contract.sqlite"


def run_cli(*args) -> int:
    return main(list(args))


@pytest.fixture
def old_store(fake_targets):
    shutil.copy(OLD_STORE, fake_targets)
    return fake_targets


def test_old_runs_show_in_history_and_as_tables(old_store, capsys):
    assert run_cli("history") == 0
    assert capsys.readouterr().out.count("complete") == 2
    for ref in ("latest", Store(old_store).runs()[1]["id"]):
        assert run_cli("show", ref) == 0
        out = capsys.readouterr().out
        assert "fake/ok" in out and ("hops/s" in out or "received/s" in out)


@pytest.mark.parametrize("fmt", registry.names())
def test_old_runs_export_in_every_format_and_import_back(old_store, fmt, tmp_path, capsys):
    runs = [r["id"] for r in Store(old_store).runs()]
    out = tmp_path / f"old.{fmt}"
    assert run_cli("export", *runs, "--format", fmt, "-o", str(out)) == 0
    assert run_cli("--store", str(tmp_path / "other.sqlite"), "import", str(out)) == 0
    assert "imported run" in capsys.readouterr().out


def test_an_old_run_compares_with_a_new_one_point_by_point(old_store, capsys):
    old_ring = next(r["id"] for r in Store(old_store).runs() if "ring" in r["command"])
    assert run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--sweep", "m=1,2", "--repeat", "3",
                   "--no-build") == 0
    capsys.readouterr()
    assert run_cli("compare", old_ring, "latest") == 0
    out = capsys.readouterr().out
    assert "n=10" in out and "m=1" in out and "m=2" in out
    assert "hops_per_s" in out


def test_an_old_run_draws_in_the_report(old_store, tmp_path, capsys):
    runs = [r["id"] for r in Store(old_store).runs()]
    html = tmp_path / "report.html"
    assert run_cli("report", *runs, "-o", str(html)) == 0
    text = html.read_text()
    assert "Send Throughput" in text or "send" in text.lower()
    assert all(run_id in text for run_id in runs)
