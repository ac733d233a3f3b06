"""Phases for the timing line at the end of `make run` (scripts/timed.sh): spans that
happen inside one command (the builds beside `msgbench run`) and moments (the first table
row on screen), written where $MSGBENCH_PHASES names, in timed.sh's own line format:
PHASE<tab>START_MS<tab>END_MS, wall-clock milliseconds (a moment: START = END).
Nothing is written when the variable is not set (msgbench used by hand)."""

import os
import time

_marked: set[tuple[str, str]] = set()


def span(name: str, start_s: float, end_s: float) -> None:
    """A phase from start_s to end_s (time.time())."""
    log = os.environ.get("MSGBENCH_PHASES")
    if not log:
        return
    try:
        with open(log, "a") as f:
            f.write(f"{name}\t{round(start_s * 1000)}\t{round(end_s * 1000)}\n")
    except OSError:
        pass  # the timing line misses a phase; the run itself is unharmed


def mark(name: str) -> None:
    """A moment, the first time it happens for this log (later ones are not news)."""
    key = (os.environ.get("MSGBENCH_PHASES"), name)
    if not key[0] or key in _marked:
        return
    _marked.add(key)
    now = time.time()
    span(name, now, now)
