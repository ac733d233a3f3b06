"""The store never loses a measurement and never breaks on a path: atomic imports,
delete, a store held by a real second process, paths that cannot work."""

import contextlib
import os
import sqlite3
import subprocess
import sys
import time

import pytest

from msgbench.core.paths import REPO_ROOT
from msgbench.data import storefile
from msgbench.data.store import Store, StoreError
from tests.conftest import FIXTURE_TARGETS

PYTHON = sys.executable


def measurement(i: int) -> dict:
    return {"scenario": "ring", "workload": "ring", "target": "fake", "variant": "ok", "variant_label": "idiomatic",
            "params": {"n": 10}, "sweep": None, "x": None, "repetition": i, "warmup": False, "status": "ok",
            "error": None, "metrics": {"hops_per_s": 1.0 + i}, "verify": {"hops": 10}}


def imported(run_id: str, measurements: list, logs: dict | None = None) -> dict:
    return {"id": run_id, "created_at": "2026-11-22T09:00:00+00:00", "status": "complete",
            "measurements": measurements, "logs": logs or {}}


def msgbench(*args, store, env=None, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "msgbench", "--store", str(store), *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120,
                          env=os.environ | {"MSGBENCH_TARGETS_DIR": str(FIXTURE_TARGETS)} | (env or {}), **kwargs)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> None:
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in proc.stderr, proc.stderr
    for word in words:
        assert word in lines[0], lines[0]


# ---------------------------------------------------------------- imports are atomic


def test_an_import_that_fails_half_way_leaves_nothing_and_a_retry_succeeds(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    broken = [measurement(1), measurement(2), {"scenario": "ring"}, measurement(4)]  # the third cannot be stored
    with pytest.raises(KeyError):
        store.import_run(imported("20261122-090000-aaaa", broken), "a.json")
    assert store.runs() == []
    assert store.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 0
    store.import_run(imported("20261122-090000-aaaa", [measurement(i) for i in range(1, 5)]), "a.json")
    assert len(store.measurements("20261122-090000-aaaa")) == 4


def test_an_import_interrupted_by_ctrl_c_leaves_nothing(tmp_path):
    store = Store(tmp_path / "s.sqlite")

    def rows():
        yield measurement(1)
        raise KeyboardInterrupt

    class Measurements(list):
        def __iter__(self):
            return rows()

    with pytest.raises(KeyboardInterrupt):
        store.import_run(imported("20261122-090000-aaaa", Measurements()), "a.json")
    assert store.runs() == []


def test_an_import_is_one_transaction(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    statements = []
    store.db.set_trace_callback(statements.append)
    store.import_run(imported("20261122-090000-aaaa", [measurement(i) for i in range(200)],
                              {"nats": "log"}), "a.json")
    assert sum(s.strip().upper() == "COMMIT" for s in statements) == 1


def test_a_run_already_in_the_store_names_the_command_that_removes_it(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(imported("20261122-090000-aaaa", []), "a.json")
    with pytest.raises(StoreError, match="msgbench delete 20261122-090000-aaaa"):
        store.import_run(imported("20261122-090000-aaaa", []), "a.json")


# ---------------------------------------------------------------- delete


def test_delete_removes_a_run_its_measurements_and_logs(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.import_run(imported("20261122-090000-aaaa", [measurement(1), measurement(2)], {"nats": "x"}), "a.json")
    store.import_run(imported("20261122-090000-bbbb", [measurement(1)]), "b.json")
    store.close()
    proc = msgbench("delete", "20261122-090000-aaaa", store=path)
    assert proc.returncode == 0 and "deleted run 20261122-090000-aaaa (2 measurements)" in proc.stdout
    store = Store(path)
    assert [r["id"] for r in store.runs()] == ["20261122-090000-bbbb"]
    assert store.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 1
    assert store.db.execute("SELECT COUNT(*) FROM run_logs").fetchone()[0] == 0
    one_line_error(msgbench("delete", "20261122-090000-cccc", store=path), "no run '20261122-090000-cccc'")


def test_run_ids_with_sql_wildcards_match_only_literally(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(imported("20261122-090000-aaaa", []), "a.json")
    for pattern in ("%", "2026%", "_0261122", "20261122-090000-aa_a"):
        with pytest.raises(StoreError, match="no run"):
            store.resolve(pattern)
    assert store.resolve("20261122-0900") == "20261122-090000-aaaa"


# ---------------------------------------------------------------- a store held by another process


HOLDER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")   # a write lock, as another msgbench importing would hold
print("holding", flush=True)
time.sleep(float(sys.argv[2]))
db.execute("COMMIT")
"""


@contextlib.contextmanager
def held(path, seconds: float):
    holder = subprocess.Popen([PYTHON, "-c", HOLDER, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        yield holder
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.alone  # the store is held for a fixed time, which a loaded machine's run start could outlast
def test_a_run_waits_for_a_store_another_process_holds_and_loses_nothing(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    with held(path, storefile.BUSY_TIMEOUT_S + 3):
        proc = msgbench("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "3", "--warmup", "1",
                        "--no-build", store=path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"the store {path} is locked by another process; waiting to store" in proc.stderr
    assert "is free again" in proc.stderr
    store = Store(path)
    [run] = store.runs()
    assert run["status"] == "complete" and run["measured"] == 4


def test_the_waiter_notes_the_wait_and_retries_until_the_write_goes_through(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    notes = []
    store.waiter = storefile.LockWaiter(path, notes.append, step_s=0.05)
    store.db.execute("PRAGMA busy_timeout = 0")
    with held(path, 1.0) as holder:
        started = time.monotonic()
        store.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "a.json")
        assert holder.wait(timeout=10) == 0 and time.monotonic() - started > 0.5
    assert len(notes) == 2 and "locked by another process" in notes[0] and "free again" in notes[1]
    assert len(store.measurements("20261122-090000-aaaa")) == 1


# ---------------------------------------------------------------- paths that cannot work


def test_a_store_under_a_file(tmp_path):
    (tmp_path / "file").write_text("x")
    one_line_error(msgbench("history", store=tmp_path / "file" / "s.sqlite"), "is a file, not a directory")


def test_a_store_that_is_a_directory(tmp_path):
    one_line_error(msgbench("history", store=tmp_path), "is a directory")


def test_a_file_that_is_not_sqlite_is_refused_and_left_as_it_was(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_bytes(b"my precious notes\n" * 100)
    before = path.read_bytes()
    one_line_error(msgbench("history", store=path), "is not a msgbench store")
    one_line_error(msgbench("run", "ring", "--target", "fake", "--no-build", store=path), "is not a msgbench store")
    assert path.read_bytes() == before


def test_a_truncated_store_is_named_damaged(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.import_run(imported("20261122-090000-aaaa", [measurement(i) for i in range(300)]), "a.json")
    store.close()
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    proc = msgbench("show", "latest", store=path)
    one_line_error(proc, str(path))
    assert "damaged" in proc.stderr or "malformed" in proc.stderr


def test_an_sqlite_file_that_is_not_a_store(tmp_path):
    path = tmp_path / "other.sqlite"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE runs (x)")
    db.commit()
    db.close()
    one_line_error(msgbench("history", store=path), str(path))


@pytest.fixture
def read_only_store(tmp_path):
    """A store on a file the kernel refuses to change, even for root (chattr +i)."""
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "a.json")
    store.close()
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True, check=False).returncode != 0:
        pytest.skip("chattr +i is not available on this filesystem")
    yield path
    subprocess.run(["chattr", "-i", str(path)], check=False)


def test_a_read_only_store_is_read_and_refuses_writes_in_one_line(read_only_store):
    before = read_only_store.read_bytes()
    proc = msgbench("history", store=read_only_store)
    assert proc.returncode == 0 and "20261122-090000-aaaa" in proc.stdout, proc.stderr
    one_line_error(msgbench("run", "ring", "--target", "fake", "--no-build", store=read_only_store),
                   "is read-only")
    one_line_error(msgbench("delete", "latest", store=read_only_store), "is read-only")
    assert read_only_store.read_bytes() == before


# ---------------------------------------------------------------- outputs that cannot be written


def test_outputs_that_cannot_be_written_get_one_line(tmp_path):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "a.json")
    store.close()
    one_line_error(msgbench("export", "latest", "-o", str(tmp_path / "missing" / "out.json"), store=path),
                   "cannot write", "No such file or directory")
    (tmp_path / "file").write_text("x")
    one_line_error(msgbench("report", "latest", "-o", str(tmp_path / "file" / "r.html"), store=path),
                   "cannot write")
    one_line_error(msgbench("report", "latest", "-o", str(tmp_path / "r.html"), "--png",
                            str(tmp_path / "file" / "png"), store=path), "cannot write the PNGs")
