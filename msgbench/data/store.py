"""The result store: one SQLite file, written as each measurement ends.

A run is inserted when it starts and every measurement is committed the moment it
finishes, so an interrupted or crashed run keeps everything it had measured.
"""

import json
import secrets
import sqlite3
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from msgbench.core.spill import JsonLines
from msgbench.data import storefile

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    command TEXT NOT NULL,
    suite TEXT,
    notes TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    imported_from TEXT
);
CREATE TABLE IF NOT EXISTS measurements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    scenario TEXT NOT NULL,
    workload TEXT NOT NULL,
    target TEXT NOT NULL,
    build TEXT NOT NULL DEFAULT '',
    variant TEXT NOT NULL,
    variant_label TEXT NOT NULL,
    params TEXT NOT NULL,
    sweep TEXT,
    x TEXT,
    repetition INTEGER NOT NULL,
    warmup INTEGER NOT NULL,
    status TEXT NOT NULL,
    error TEXT,
    metrics TEXT NOT NULL DEFAULT '{}',
    verify TEXT NOT NULL DEFAULT '{}',
    runtime_version TEXT,
    started_at TEXT,
    worker TEXT NOT NULL DEFAULT '{}',
    stderr_tail TEXT,
    extra TEXT NOT NULL DEFAULT '{}',
    series TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS measurements_by_run ON measurements(run_id);
CREATE TABLE IF NOT EXISTS run_logs (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""

_JSON_COLUMNS = ("params", "x", "metrics", "verify", "worker", "extra", "series")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return new_run_ids(1)[0]


def new_run_ids(count: int) -> list[str]:
    """`count` run ids that differ from each other: the time to the second, then
    consecutive hex numbers from a random start (4 digits, more for a batch that
    needs them), so a 2,000-run paste made in one second cannot collide with itself
    the way 2,000 random 4-digit suffixes do."""
    width = max(4, len(f"{count:x}") + 1)
    start = secrets.randbelow(16 ** width)
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-")
    return [stamp + f"{(start + i) % 16 ** width:0{width}x}" for i in range(count)]


class StoreError(LookupError):
    pass


class Store:
    def __init__(self, path: Path, note: Callable[[str], None] | None = None):
        self.path = Path(path)
        try:
            self.db, self.read_only = storefile.connect(self.path)
        except storefile.StoreFileError as exc:
            raise StoreError(str(exc)) from None
        self.db.row_factory = sqlite3.Row
        self.waiter = storefile.LockWaiter(self.path, note)
        try:
            self.db.execute("PRAGMA foreign_keys = ON")
            if self.read_only:
                self.db.execute("SELECT 1 FROM runs LIMIT 1")  # a store, not some other SQLite file
            else:
                self._write(lambda: self.db.executescript(SCHEMA), "the store's tables")
                self._write(self._add_new_columns, "the store's new columns")
        except (sqlite3.Error, StoreError) as exc:
            self.db.close()
            if isinstance(exc, StoreError):
                raise
            raise StoreError(str(storefile.problem(self.path, exc))) from None

    def _write(self, write: Callable[[], object], what: str):
        """One write transaction, waiting out another process that holds the store."""
        if self.read_only:
            raise StoreError(f"store {self.path} is read-only: cannot store {what}")

        def transaction():
            with self.db:
                return write()

        try:
            return self.waiter.run(transaction, what)
        except storefile.StoreFileError as exc:
            raise StoreError(str(exc)) from None

    def _add_new_columns(self) -> None:
        """A store made by an earlier msgbench gets the columns added since, with their
        defaults: its runs read as before (a measurement of no named build)."""
        have = {row["name"] for row in self.db.execute("PRAGMA table_info(measurements)")}
        for column, definition in _ADDED_COLUMNS.items():
            if column not in have:
                self.db.execute(f"ALTER TABLE measurements ADD COLUMN {column} {definition}")

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ runs

    def start_run(self, command: str, suite: str | None, metadata: dict, notes: list[str]) -> str:
        run_id = new_run_id()
        self._write(lambda: self.db.execute(
            "INSERT INTO runs (id, created_at, status, command, suite, notes, metadata)"
            " VALUES (?, ?, 'running', ?, ?, ?, ?)",
            (run_id, now_iso(), command, suite, _dumps(notes), _dumps(metadata)),
        ), "the new run")
        return run_id

    def finish_run(self, run_id: str, status: str) -> None:
        self._write(lambda: self.db.execute(
            "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, now_iso(), run_id)
        ), f"run {run_id}'s status ({status})")

    def mark_abandoned(self, harness_alive: Callable[[dict], bool]) -> list[str]:
        """Runs still `running` whose harness (metadata["harness"]) is gone become
        `abandoned`, with a note; their measurements stay. Runs stored before the
        harness was recorded cannot be judged and are left as they are."""
        marked = []
        if self.read_only:
            return []
        for row in self.db.execute("SELECT id, metadata, notes FROM runs WHERE status = 'running'").fetchall():
            harness = json.loads(row["metadata"]).get("harness")
            if not isinstance(harness, dict) or harness_alive(harness):
                continue
            note = (f"abandoned: its harness (pid {harness.get('pid')} on {harness.get('host')}) "
                    f"was gone when msgbench started at {now_iso()}; what it measured is kept")
            self.db.execute("PRAGMA busy_timeout = 0")  # a store held by another process is marked next time
            try:
                with self.db:
                    self.db.execute("UPDATE runs SET status = 'abandoned', notes = ? WHERE id = ? "
                                    "AND status = 'running'", (_dumps([*json.loads(row["notes"]), note]), row["id"]))
            finally:
                self.db.execute(f"PRAGMA busy_timeout = {int(storefile.BUSY_TIMEOUT_S * 1000)}")
            marked.append(row["id"])
        return marked

    def add_note(self, run_id: str, note: str) -> None:
        run = self.run(run_id)
        self._write(lambda: self.db.execute(
            "UPDATE runs SET notes = ? WHERE id = ?", (_dumps(run["notes"] + [note]), run_id)
        ), "a note")

    def set_hosts(self, run_id: str, facts: dict) -> None:
        """The metadata of the hosts a run's roles were placed on (metadata["hosts"])."""
        self.set_metadata(run_id, "hosts", facts, "the hosts' metadata")

    def set_metadata(self, run_id: str, key: str, value, what: str = "the run's metadata") -> None:
        """One key of a run's metadata, set as the run goes (a capacity search's results)."""
        row = self.db.execute("SELECT metadata FROM runs WHERE id = ?", (run_id,)).fetchone()
        metadata = json.loads(row["metadata"]) | {key: value}
        self._write(lambda: self.db.execute(
            "UPDATE runs SET metadata = ? WHERE id = ?", (_dumps(metadata), run_id)), what)

    def runs(self, limit: int | None = None) -> list[dict]:
        sql = (
            "SELECT r.*, (SELECT COUNT(*) FROM measurements m WHERE m.run_id = r.id) AS measured"
            " FROM runs r ORDER BY created_at DESC, r.rowid DESC"
        )
        rows = self.db.execute(sql + (f" LIMIT {int(limit)}" if limit else "")).fetchall()
        return [_run_dict(row) for row in rows]

    def resolve(self, ref: str) -> str:
        """A run id from an id, a unique prefix of one, or 'latest'/'last'.

        'latest' is the run stored last, by insertion order: an import keeps its
        original start time, and two runs can start within the same second.
        """
        if ref in ("latest", "last"):
            row = self.db.execute("SELECT id FROM runs ORDER BY rowid DESC LIMIT 1").fetchone()
            if row is None:
                raise StoreError(f"the store {self.path} holds no runs yet")
            return row["id"]
        # A prefix, compared as text: an id with _ or % is no pattern.
        rows = self.db.execute("SELECT id FROM runs WHERE substr(id, 1, ?) = ?", (len(ref), ref)).fetchall()
        if len(rows) == 1:
            return rows[0]["id"]
        if not rows:
            raise StoreError(f"no run {ref!r} in {self.path}; `msgbench history` lists the runs")
        raise StoreError(f"{ref!r} matches {len(rows)} runs: {', '.join(r['id'] for r in rows[:5])}")

    def run(self, run_id: str) -> dict:
        row = self.db.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise StoreError(f"no run {run_id!r} in {self.path}")
        return _run_dict(row)

    # ------------------------------------------------------------ measurements

    def add_measurement(self, run_id: str, m: dict) -> None:
        """Stored the moment it ends, waiting out another process that holds the store."""
        row = [run_id, *_measurement_row(m)]
        self._write(lambda: self.db.execute(_INSERT_MEASUREMENT, row),
                    f"{m.get('target')}/{m.get('variant')} {m.get('workload')} repetition {m.get('repetition')}")

    def delete_run(self, run_id: str) -> int:
        """Remove a run with its measurements and logs; the number of measurements it had."""
        def delete():
            count = self.db.execute("SELECT COUNT(*) FROM measurements WHERE run_id = ?", (run_id,)).fetchone()[0]
            self.db.execute("DELETE FROM runs WHERE id = ?", (run_id,))  # its rows go with it (ON DELETE CASCADE)
            return count
        self.run(run_id)
        return self._write(delete, f"the deletion of run {run_id}")

    def measurements(self, run_id: str) -> list[dict]:
        rows = self.db.execute(
            "SELECT * FROM measurements WHERE run_id = ? ORDER BY id", (run_id,)
        ).fetchall()
        found = []
        for row in rows:
            m = dict(row)
            for column in _JSON_COLUMNS:
                m[column] = json.loads(m[column]) if m[column] is not None else None
            m["warmup"] = bool(m["warmup"])
            m.setdefault("build", "")  # a read-only store from before builds
            m["series"] = m.get("series") or []  # likewise, from before time series
            m["extra"] = m["extra"] or {}
            del m["id"], m["run_id"]
            found.append(m)
        return found

    # ------------------------------------------------------------ import

    def add_log(self, run_id: str, name: str, text: str) -> None:
        """A service's log, kept with the run (one per service start)."""
        self._write(lambda: self.db.execute("INSERT OR REPLACE INTO run_logs (run_id, name, text) VALUES (?, ?, ?)",
                                            (run_id, name, text)), f"{name}'s log")

    def logs(self, run_id: str) -> dict[str, str]:
        rows = self.db.execute("SELECT name, text FROM run_logs WHERE run_id = ? ORDER BY name", (run_id,))
        return {row["name"]: row["text"] for row in rows}

    def import_run(self, run: dict, source: str) -> str:
        return self.import_runs([run], source)[0]

    def import_runs(self, runs: list[dict], source: str) -> list[str]:
        """The runs of one document, all or none, in one transaction: a run id already
        in the store or twice in the document refuses the whole document before anything
        is written, and a failure or Ctrl-C half-way leaves nothing of any of them, so
        the import can simply be retried."""
        ids = [run["id"] for run in runs]
        twice = sorted(run_id for run_id, n in Counter(ids).items() if n > 1)
        if twice:
            raise StoreError(f"{source} holds run {twice[0]} more than once; nothing was imported")

        def insert():
            for run_id in ids:
                if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone():
                    raise StoreError(f"run {run_id} is already in {self.path}; `msgbench delete {run_id}` "
                                     "removes it; nothing was imported")
            for run in runs:
                self._insert_run(run, source)
        what = f"the imported run {ids[0]}" if len(ids) == 1 else f"the {len(ids)} imported runs"
        self._write(insert, what)
        return ids

    def _insert_run(self, run: dict, source: str) -> None:
        self.db.execute(
            "INSERT INTO runs (id, created_at, finished_at, status, command, suite, notes,"
            " metadata, imported_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                run["id"], run["created_at"], run.get("finished_at"), run["status"],
                run.get("command", ""), run.get("suite"), _dumps(run.get("notes", [])),
                _dumps(run.get("metadata", {})), source,
            ),
        )
        self.db.executemany(_INSERT_MEASUREMENT,
                            ([run["id"], *_measurement_row(m)] for m in run.get("measurements", [])))
        self.db.executemany("INSERT INTO run_logs (run_id, name, text) VALUES (?, ?, ?)",
                            ((run["id"], name, text) for name, text in (run.get("logs") or {}).items()))


# Columns added after the first release, with their definitions (for older stores).
_ADDED_COLUMNS = {"build": "TEXT NOT NULL DEFAULT ''", "series": "TEXT NOT NULL DEFAULT '[]'"}

_MEASUREMENT_COLUMNS = [
    "scenario", "workload", "target", "build", "variant", "variant_label", "params", "sweep", "x",
    "repetition", "warmup", "status", "error", "metrics", "verify", "runtime_version",
    "started_at", "worker", "stderr_tail", "extra", "series",
]
_INSERT_MEASUREMENT = (f"INSERT INTO measurements (run_id, {', '.join(_MEASUREMENT_COLUMNS)})"
                       f" VALUES (?, {', '.join('?' * len(_MEASUREMENT_COLUMNS))})")


def _measurement_row(m: dict) -> list:
    return [m[c].json_array() if isinstance(m.get(c), JsonLines)  # a time series read from its file
            else _dumps(m.get(c)) if c in _JSON_COLUMNS else int(m[c]) if c == "warmup"
            else (m.get(c) or "") if c == "build" else (m.get(c) or []) if c == "series" else m.get(c)
            for c in _MEASUREMENT_COLUMNS]


def _dumps(value) -> str:
    """JSON as stored: never NaN or infinity, which no JSON reader takes back."""
    return json.dumps(value, allow_nan=False)


def _run_dict(row: sqlite3.Row) -> dict:
    run = dict(row)
    run["notes"] = json.loads(run["notes"])
    run["metadata"] = json.loads(run["metadata"])
    return run
