"""Opening the store's SQLite file, and waiting out another process that holds it.

Kept apart from store.py (what is stored) because both concerns are about the file:
a path that cannot work gets one clear line naming it and what is wrong, and never
a change to the file; a store another process is writing is waited for, with a
note, and never loses what this process was about to write.
"""

import os
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path

# SQLite's own busy handler retries for this long before a statement fails with
# "database is locked"; then we note it and wait on, in these steps.
BUSY_TIMEOUT_S = 5.0
NOTE_EVERY_S = 30.0
SQLITE_MAGIC = b"SQLite format 3\x00"


class StoreFileError(LookupError):
    """A store path that cannot be used, said in one line."""


def connect(path: Path) -> tuple[sqlite3.Connection, bool]:
    """The store's connection and whether it is read-only, or StoreFileError.

    A store that can be read but not written (a read-only file or directory) is
    opened read-only, so `history` and `show` still work; writing to it then fails
    with a clear line. Nothing is written to a file that is not a store.
    """
    path = Path(path)
    if path.is_dir():
        raise StoreFileError(f"store {path} is a directory; give the path of a file (it is created if missing)")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise StoreFileError(f"store {path} cannot be created: {parent} is a file, not a directory")
            break
    if path.exists():
        _check_is_sqlite(path)
        read_only = not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK)
    else:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreFileError(f"store {path} cannot be created: {exc.strerror}") from None
        if not os.access(path.parent, os.W_OK):
            raise StoreFileError(f"store {path} cannot be created: {path.parent} is not writable")
        read_only = False
    try:
        if read_only:
            db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_S)
        else:
            db = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise StoreFileError(f"store {path} cannot be opened: {exc}") from None
    return db, read_only


def _check_is_sqlite(path: Path) -> None:
    """Refuse, without touching it, a file that is not an SQLite database."""
    try:
        with open(path, "rb") as f:
            head = f.read(len(SQLITE_MAGIC))
    except OSError as exc:
        raise StoreFileError(f"store {path} cannot be read: {exc.strerror}") from None
    if head and head != SQLITE_MAGIC:
        raise StoreFileError(f"store {path} is not a msgbench store (not an SQLite database); "
                             "give another path, or move the file away")


def problem(path: Path, exc: sqlite3.Error) -> StoreFileError:
    """An SQLite error on an open store, as one line naming the store."""
    text = str(exc)
    if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in text or "not a database" in text):
        return StoreFileError(f"store {path} is damaged ({text}); restore it from a copy, or give another path")
    if "readonly" in text or "read-only" in text:
        return StoreFileError(f"store {path} is read-only: nothing can be stored in it")
    return StoreFileError(f"store {path}: {text}")


def is_locked(exc: sqlite3.Error) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))


class LockWaiter:
    """Runs a write, waiting as long as another process holds the store.

    A measurement is never dropped because someone else is writing: the write is
    retried until it goes through, with a note on stderr when the wait starts and
    every NOTE_EVERY_S, so a user knows why the run pauses and who to look for.
    """

    def __init__(self, path: Path, note: Callable[[str], None] | None = None, step_s: float = 0.2):
        self.path, self.step_s = path, step_s
        self.note = note or (lambda text: print(f"msgbench: {text}", file=sys.stderr, flush=True))

    def run(self, write: Callable[[], object], what: str):
        started = noted = None
        while True:
            try:
                result = write()
            except sqlite3.Error as exc:
                if not is_locked(exc):
                    raise problem(self.path, exc) from None
                now = time.monotonic()
                started = started or now
                if noted is None or now - noted >= NOTE_EVERY_S:
                    waited = f" (for {now - started + BUSY_TIMEOUT_S:.0f} s so far)" if noted else ""
                    self.note(f"the store {self.path} is locked by another process; waiting to store {what}"
                              f"{waited}; Ctrl-C stops the run")
                    noted = now
                time.sleep(self.step_s)
                continue
            if noted is not None:
                self.note(f"the store {self.path} is free again; stored {what}")
            return result
