"""Progress on stderr: a live line on a terminal, one line per measurement otherwise."""

import sys
import time

from msgbench import terminal


class Progress:
    def __init__(self, total: int, stream=None, quiet: bool = False):
        self.total, self.count = total, 0
        # Its own cursor codes go around the control-sequence filter; the labels and
        # errors in them through it.
        self.stream = terminal.raw(stream or sys.stderr)
        self.live = self.stream.isatty()
        self.quiet = quiet
        self.label = ""
        self.began = self.started = time.monotonic()

    def start(self, label: str) -> None:
        self.label, self.started = label, time.monotonic()
        self._draw("")

    def worker_progress(self, done: float, total: float) -> None:
        self._draw(f" {done:g}/{total:g}")

    def done(self, status: str, error: str | None = None) -> None:
        self.count += 1
        took = time.monotonic() - self.started
        if self.quiet:
            return
        line = f"[{self.count}/{self.total}] {self.label}: {status} ({took:.1f} s)"
        if error and status != "ok":
            line += f" - {error[:300]}"
        if self.live:
            self.stream.write("\r\033[K")
        self.stream.write(terminal.safe(line) + "\n")
        self.stream.flush()

    def skip(self) -> None:
        self.count += 1

    def close(self) -> None:
        if self.live and not self.quiet:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def _draw(self, detail: str) -> None:
        if not self.live or self.quiet:
            return
        width = 24
        filled = int(width * self.count / max(self.total, 1))
        bar = "#" * filled + "." * (width - filled)
        elapsed = time.monotonic() - self.started
        label = terminal.safe(self.label)
        self.stream.write(f"\r\033[K[{bar}] {self.count}/{self.total} {label}{detail} {elapsed:.0f}s")
        self.stream.flush()
