"""The result store: one SQLite file, written as each measurement ends.

A run is inserted when it starts and every measurement is committed the moment it
finishes, so an interrupted or crashed run keeps everything it had measured.
"""

import json
import secrets
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

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
    extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS measurements_by_run ON measurements(run_id);
CREATE TABLE IF NOT EXISTS run_logs (
    run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);
"""

_JSON_COLUMNS = ("params", "x", "metrics", "verify", "worker", "extra")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)


class StoreError(LookupError):
    pass


class Store:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.executescript(SCHEMA)

    def close(self) -> None:
        self.db.close()

    # ------------------------------------------------------------ runs

    def start_run(self, command: str, suite: str | None, metadata: dict, notes: list[str]) -> str:
        run_id = new_run_id()
        with self.db:
            self.db.execute(
                "INSERT INTO runs (id, created_at, status, command, suite, notes, metadata)"
                " VALUES (?, ?, 'running', ?, ?, ?, ?)",
                (run_id, now_iso(), command, suite, json.dumps(notes), json.dumps(metadata)),
            )
        return run_id

    def finish_run(self, run_id: str, status: str) -> None:
        with self.db:
            self.db.execute(
                "UPDATE runs SET status = ?, finished_at = ? WHERE id = ?", (status, now_iso(), run_id)
            )

    def mark_abandoned(self, harness_alive: Callable[[dict], bool]) -> list[str]:
        """Runs still `running` whose harness (metadata["harness"]) is gone become
        `abandoned`, with a note; their measurements stay. Runs stored before the
        harness was recorded cannot be judged and are left as they are."""
        marked = []
        for row in self.db.execute("SELECT id, metadata FROM runs WHERE status = 'running'").fetchall():
            harness = json.loads(row["metadata"]).get("harness")
            if not isinstance(harness, dict) or harness_alive(harness):
                continue
            self.add_note(row["id"], f"abandoned: its harness (pid {harness.get('pid')} on {harness.get('host')}) "
                                     f"was gone when msgbench started at {now_iso()}; what it measured is kept")
            with self.db:
                self.db.execute("UPDATE runs SET status = 'abandoned' WHERE id = ? AND status = 'running'",
                                (row["id"],))
            marked.append(row["id"])
        return marked

    def add_note(self, run_id: str, note: str) -> None:
        run = self.run(run_id)
        with self.db:
            self.db.execute(
                "UPDATE runs SET notes = ? WHERE id = ?", (json.dumps(run["notes"] + [note]), run_id)
            )

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
        rows = self.db.execute("SELECT id FROM runs WHERE id LIKE ? || '%'", (ref,)).fetchall()
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
        columns = [
            "scenario", "workload", "target", "variant", "variant_label", "params", "sweep", "x",
            "repetition", "warmup", "status", "error", "metrics", "verify", "runtime_version",
            "started_at", "worker", "stderr_tail", "extra",
        ]
        values = [
            json.dumps(m.get(c)) if c in _JSON_COLUMNS else (int(m[c]) if c == "warmup" else m.get(c))
            for c in columns
        ]
        with self.db:
            self.db.execute(
                f"INSERT INTO measurements (run_id, {', '.join(columns)})"
                f" VALUES (?, {', '.join('?' * len(columns))})",
                [run_id, *values],
            )

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
            m["extra"] = m["extra"] or {}
            del m["id"], m["run_id"]
            found.append(m)
        return found

    # ------------------------------------------------------------ import

    def add_log(self, run_id: str, name: str, text: str) -> None:
        """A service's log, kept with the run (one per service start)."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO run_logs (run_id, name, text) VALUES (?, ?, ?)",
                            (run_id, name, text))

    def logs(self, run_id: str) -> dict[str, str]:
        rows = self.db.execute("SELECT name, text FROM run_logs WHERE run_id = ? ORDER BY name", (run_id,))
        return {row["name"]: row["text"] for row in rows}

    def import_run(self, run: dict, source: str) -> str:
        if self.db.execute("SELECT 1 FROM runs WHERE id = ?", (run["id"],)).fetchone():
            raise StoreError(f"run {run['id']} is already in {self.path}")
        with self.db:
            self.db.execute(
                "INSERT INTO runs (id, created_at, finished_at, status, command, suite, notes,"
                " metadata, imported_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    run["id"], run["created_at"], run.get("finished_at"), run["status"],
                    run.get("command", ""), run.get("suite"), json.dumps(run.get("notes", [])),
                    json.dumps(run.get("metadata", {})), source,
                ),
            )
        for m in run.get("measurements", []):
            self.add_measurement(run["id"], m)
        for name, text in (run.get("logs") or {}).items():
            self.add_log(run["id"], name, text)
        return run["id"]


def _run_dict(row: sqlite3.Row) -> dict:
    run = dict(row)
    run["notes"] = json.loads(run["notes"])
    run["metadata"] = json.loads(run["metadata"])
    return run
