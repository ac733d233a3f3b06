"""The runner against test-double workers: every way a worker can fail is stored as such."""

import json

import pytest

from msgbench.cli import main
from msgbench.data import results
from msgbench.data.store import Store
from tests.conftest import processes_matching


def run_cli(*args) -> int:
    return main(list(args))


def only_run(store_path):
    store = Store(store_path)
    run_id = store.resolve("latest")
    return store.run(run_id), store.measurements(run_id), results.run_document(store, [run_id])


def test_good_worker_is_measured_stored_and_summarised(fake_targets, capsys):
    code = run_cli("run", "ring", "--target", "fake", "-p", "m=3", "--sweep", "n=10,20",
                   "--repeat", "3", "--warmup", "1", "--no-build")
    assert code == 0
    run, measurements, doc = only_run(fake_targets)
    assert run["status"] == "complete"
    assert len(measurements) == 2 * (1 + 3)
    assert [m["warmup"] for m in measurements].count(True) == 2
    summary = {s["x"]: s for s in doc["runs"][0]["summary"]}
    assert summary[10]["metrics"]["hops_per_s"]["n"] == 3
    assert summary[20]["params"] == {"n": 20, "m": 3, "payload": "BOO!"}
    assert summary[20]["message_queue_data"] == "off_heap"  # the variant's options, stored with it
    # hops_per_s = n * m / pass_wall: derived by the harness from the raw facts (fake: 2 ms / (1 + repetition))
    assert summary[20]["metrics"]["hops_per_s"]["median"] == pytest.approx(20 * 3 / (666_666 / 1e9))  # rep 2
    assert measurements[-1]["worker"]["measured"]["pass_wall_ns"] == 2 * 10**6 // 4
    assert run["metadata"]["runtimes"]["fake"].startswith("Python")
    assert "hops/s" in capsys.readouterr().out


def test_targets_are_interleaved(fake_targets):
    run_cli("run", "ring", "--target", "fake", "--variant", "ok,slow", "-p", "n=10",
            "--repeat", "2", "--warmup", "0", "--no-build")
    _, measurements, _ = only_run(fake_targets)
    assert [m["variant"] for m in measurements] == ["ok", "slow", "ok", "slow"]


@pytest.mark.parametrize("variant, status, words", [
    ("badverify", "failed", "hops == n * m does not hold"),
    ("crash", "error", "without a result"),
    ("garbage", "error", "not JSON"),
    ("unsupported", "unsupported", "fake does not do this"),
    ("nohello", "error", "first line was not hello"),
    ("wrongschema", "error", "breaks the protocol"),
    ("wrongfacts", "error", "measured pass_wall_ms is not a raw fact of ring"),
    ("badsample", "error", "breaks the protocol"),
])
def test_misbehaving_worker_is_stored_as_such(fake_targets, variant, status, words):
    code = run_cli("run", "ring", "--target", "fake", "--variant", variant, "-p", "n=10",
                   "--repeat", "2", "--warmup", "0", "--timeout", "5", "--no-build")
    assert code == (0 if status == "unsupported" else 1)
    _, measurements, doc = only_run(fake_targets)
    assert measurements[0]["status"] == status
    assert words in measurements[0]["error"]
    summary = doc["runs"][0]["summary"][0]
    assert summary["status"] == status and summary["metrics"] == {}
    assert not processes_matching("worker.py")


def test_a_workers_samples_are_stored_and_exported_as_its_time_series(fake_targets, tmp_path):
    assert run_cli("run", "ring", "--target", "fake", "--variant", "samples,ok", "-p", "n=10",
                   "--repeat", "1", "--warmup", "0", "--no-build") == 0
    _, measurements, doc = only_run(fake_targets)
    by_variant = {m["variant"]: m for m in measurements}
    expected = [{"t_ms": 0.0, "rss_bytes": 1000, "gc_count": 0.0}, {"t_ms": 1000.0, "rss_bytes": 1500, "gc_count": 1.0}]
    assert by_variant["samples"]["series"] == expected
    assert by_variant["ok"]["series"] == []
    exported = tmp_path / "run.json"
    assert run_cli("export", doc["runs"][0]["id"], "--format", "json", "-o", str(exported)) == 0
    run_id = doc["runs"][0]["id"]
    assert run_cli("delete", run_id) == 0
    assert run_cli("import", str(exported)) == 0
    again = {m["variant"]: m for m in Store(fake_targets).measurements(run_id)}
    assert again["samples"]["series"] == expected


def test_hanging_worker_and_its_children_are_killed_at_the_time_limit(fake_targets):
    code = run_cli("run", "ring", "--target", "fake", "--variant", "hang", "-p", "n=10",
                   "--repeat", "3", "--warmup", "0", "--timeout", "1", "--no-build")
    assert code == 1
    _, measurements, _ = only_run(fake_targets)
    assert len(measurements) == 1, "a worker that timed out is not started again"
    assert measurements[0]["status"] == "timeout"
    assert "time limit of 1 s" in measurements[0]["error"]
    assert not processes_matching("sleep 31337")
    assert not processes_matching("worker.py")


def test_a_failing_target_does_not_stop_the_others(fake_targets):
    code = run_cli("run", "ring", "--target", "fake", "--variant", "crash,ok", "-p", "n=10",
                   "--repeat", "2", "--warmup", "0", "--no-build")
    assert code == 1
    _, measurements, _ = only_run(fake_targets)
    assert [m["status"] for m in measurements if m["variant"] == "ok"] == ["ok", "ok"]


@pytest.mark.parametrize("args, words", [
    (["-p", "n=1"], "n = 1 is out of range: n must be an integer from 2 to 134,217,727"),
    (["-p", "n=0"], "n = 0 is out of range"),
    (["-p", "n=-3"], "n = -3 is out of range"),
    (["-p", "n=ten"], "n = 'ten' is not an integer"),
    (["-p", "laps=3"], "unknown parameter 'laps'"),
    (["-p", "n=100000000"], "will not fit in this machine"),
    (["-p", "n=130000000", "-p", "m=1"], "allows at most 120,000,000"),
    (["--variant", "nosuch"], "has no variant 'nosuch'"),
])
def test_bad_input_is_refused_before_any_worker_starts(fake_targets, capsys, args, words):
    code = run_cli("run", "ring", "--target", "fake", "--no-build", *args)
    assert code == 2
    assert words in capsys.readouterr().err
    assert Store(fake_targets).runs() == []


def test_unknown_workload_and_target(fake_targets, capsys):
    assert run_cli("run", "rong", "--target", "fake") == 2
    assert "unknown workload 'rong'" in capsys.readouterr().err
    assert run_cli("run", "ring", "--target", "nosuch") == 2
    assert "unknown target 'nosuch'" in capsys.readouterr().err


def test_missing_runtime_says_how_to_install_it(fake_targets, capsys):
    assert run_cli("run", "ring", "--target", "missing", "--no-build") == 2
    err = capsys.readouterr().err
    assert "needs msgbench-no-such-runtime, which is not installed" in err
    assert "apt-get install -y msgbench-no-such-package" in err


def test_doctor_lists_missing_runtime_with_install_command(fake_targets, capsys):
    assert run_cli("doctor") == 1
    out = capsys.readouterr().out
    assert "missing" in out and "apt-get install -y msgbench-no-such-package" in out


def test_export_import_and_compare_round_trip(fake_targets, tmp_path, capsys):
    for _ in range(2):
        run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "5", "--no-build")
    store = Store(fake_targets)
    newest, older = [r["id"] for r in store.runs()]
    out = tmp_path / "run.json"
    assert run_cli("export", newest, "--format", "json", "-o", str(out)) == 0
    other = tmp_path / "other.sqlite"
    assert run_cli("--store", str(other), "import", str(out)) == 0
    imported = Store(other).measurements(newest)
    assert imported == store.measurements(newest)
    assert run_cli("--store", str(other), "import", str(out)) == 2
    assert "already in" in capsys.readouterr().err
    capsys.readouterr()
    assert run_cli("compare", older, newest) == 0
    out_text = capsys.readouterr().out
    # One program twice: never a leader; the fake's timings may be too noisy to say more.
    assert "fake/ok: no significant difference" in out_text or "fake/ok: inconclusive: cv" in out_text


def test_import_refuses_a_broken_document(fake_targets, tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"format": "msgbench-results", "version": 1, "runs": [{"id": "x"}]}))
    assert run_cli("import", str(bad)) == 2
    assert "runs[0]: 'created_at' is missing" in capsys.readouterr().err
    bad.write_text("{not json")
    assert run_cli("import", str(bad)) == 2
    assert "bad.json: line 1, column 2: invalid JSON" in capsys.readouterr().err


def test_seed_format_prints_the_seed_block(fake_targets, capsys):
    run_cli("run", "ring", "--target", "fake", "-p", "n=10000", "-p", "m=100", "--repeat", "1",
            "--format", "seed", "--no-build")
    out = capsys.readouterr().out
    assert "Creating a ring of 10000 processes." in out
    assert "Elapse time (process creation) = 1 ms" in out
    assert 'Starting message round with message "BOO!"' in out
    assert "Elapse Time (total) = 2 ms" in out  # 1 ms to create, 2 ms / (1 + repetition) to pass


def test_history_and_show(fake_targets, capsys):
    run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--no-build")
    capsys.readouterr()
    assert run_cli("history") == 0
    assert "complete" in capsys.readouterr().out
    assert run_cli("show", "latest", "--format", "md") == 0
    assert "| scenario |" in capsys.readouterr().out
    assert run_cli("show", "nosuchrun") == 2


def test_report_of_a_stored_run_with_pngs(fake_targets, tmp_path, capsys):
    run_cli("run", "ring", "--target", "fake", "-p", "m=3", "--sweep", "n=10,100", "--repeat", "2", "--no-build")
    run_cli("run", "fanin", "--target", "fake", "--sweep", "senders=1,2", "--repeat", "2", "--no-build")
    capsys.readouterr()
    html, pngs = tmp_path / "out" / "report.html", tmp_path / "png"
    store = Store(fake_targets)
    runs = [r["id"] for r in store.runs()]
    assert run_cli("report", *runs, "-o", str(html), "--png", str(pngs)) == 0
    text = html.read_text()
    assert all(run_id in text for run_id in runs)
    assert "http://" not in text.replace("http://www.w3.org/2000/svg", "")  # opens offline
    assert len(list(pngs.glob("*.png"))) >= 2
    assert f"report: {html.resolve()}" in capsys.readouterr().out


def test_import_reads_the_otp_page_format(fake_targets, tmp_path, capsys):
    run_cli("run", "fanin", "--target", "fake", "--sweep", "senders=1,2", "--repeat", "2", "--no-build")
    otp_file = tmp_path / "bench.txt"
    assert run_cli("export", "latest", "--format", "otp", "-o", str(otp_file)) == 0
    assert "Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {message_size,1}" in otp_file.read_text()
    assert run_cli("import", str(otp_file)) == 0
    _, measurements, _ = only_run(fake_targets)
    assert {m["x"] for m in measurements} == {1, 2}
    # the fake sends (1 + repetition) thousand per sender in 1 s: 2000 and 3000 per sender, median 2500
    assert {m["x"]: m["metrics"]["send_throughput_per_s"] for m in measurements} == {1: 2500, 2: 5000}
    bad = tmp_path / "bad.txt"
    bad.write_text("Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {message_size,1}$\nfake; 1$\n")
    capsys.readouterr()
    assert run_cli("import", str(bad)) == 2
    assert "line 2" in capsys.readouterr().err
