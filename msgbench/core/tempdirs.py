"""Temporary directories owned by one harness process, and the sweep of those whose
harness died.

A harness killed with SIGKILL takes its children along (PR_SET_PDEATHSIG) but cannot
remove what it created in /tmp. Each directory is therefore named after the pid of the
harness that made it, and the next harness removes those whose owner is gone, as it does
for namespaces: nothing is left behind for longer than until the next run.
"""

import os
import shutil
import tempfile
from pathlib import Path


def make(prefix: str, label: str = "") -> Path:
    """A new directory /tmp/<prefix><pid>-<label>-XXXXXX, owned by this process."""
    middle = f"{label}-" if label else ""
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-{middle}"))


def owner(path: Path, prefix: str) -> int | None:
    """The pid in a directory's name, or None for a name not made by make()."""
    head = path.name[len(prefix):].split("-", 1)[0]
    return int(head) if head.isdigit() else None


def sweep(prefix: str) -> list[str]:
    """Remove the directories of prefix whose harness is no longer running; their paths."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
        pid = owner(path, prefix)
        if pid is not None and pid != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed
