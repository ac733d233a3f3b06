"""Progress on stderr: a live bar on a terminal, one line per measurement otherwise.

On a terminal, rich draws a bar with the measurement under way, the time elapsed and
an estimate of the time left; a measurement that did not succeed is printed above the
bar and stays, the others only move the bar. Anywhere else (CI logs, a pipe) each
measurement is one line, and once the run has lasted a few seconds each line also says
the time elapsed and left, so a long run in a log is never silent and never a mystery.
"""

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn, TextColumn
from rich.progress import Progress as Bar
from rich.text import Text

from msgbench.core import terminal

# Below this a run is over before an estimate could help; its lines stay short.
ETA_AFTER_S = 5.0


def duration(seconds: float) -> str:
    """A span no one misreads: 45 s, 4 min 50 s, 1 h 02 min (a clock's 4:50 reads as a time of day
    or as hours and minutes)."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {rest} s" if rest else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class _Times(ProgressColumn):
    """Elapsed and left as the log lines say them: left from the measurements' own
    durations (rich's column divides by its recent speed: "27 s left" with 4:48 to go
    when the last steps were quick n/a rows)."""

    def __init__(self, progress: "Progress"):
        super().__init__()
        self.progress = progress

    def render(self, task) -> Text:
        return Text(self.progress.times_text().removeprefix("; "))


class Progress:
    def __init__(self, total: int, stream=None, quiet: bool = False):
        self.total, self.count = total, 0
        # Its own cursor codes go around the control-sequence filter; the labels and
        # errors in them through it.
        self.stream = terminal.raw(stream or sys.stderr)
        self.live = self.stream.isatty() and not quiet
        self.quiet = quiet
        self.label = ""
        self.began = self.started = time.monotonic()
        self.measuring_s = 0.0  # the time the measurements done so far took, for the estimate
        self._bar = self._task = None  # drawn from the first measurement on, until close()

    def start(self, label: str) -> None:
        self.label, self.started = label, time.monotonic()
        if self.live and self._bar is None:
            self._bar = Bar(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                            _Times(self),
                            console=Console(file=self.stream, highlight=False, markup=False, emoji=False),
                            transient=True)
            self._task = self._bar.add_task(label, total=self.total, completed=self.count)
            self._bar.start()
        self._show("")

    def worker_progress(self, done: float, total: float) -> None:
        self._show(f" {done:g}/{total:g}")

    def note(self, text: str, log: bool = True) -> None:
        """A line about what the run is doing besides measuring (starting a broker);
        log=False: on a terminal only, where a pause of a few seconds looks like a hang,
        not in a log, where the line would be noise (a version query)."""
        if self.quiet or (not log and not self.live):
            return
        if self._bar:
            self._bar.console.print(terminal.safe(text))
        else:
            self.stream.write(terminal.safe(text) + "\n")
            self.stream.flush()

    def done(self, status: str, error: str | None = None) -> None:
        self.count += 1
        took = time.monotonic() - self.started
        self.measuring_s += took
        if self.quiet:
            return
        line = f"[{self.count}/{self.total}] {self.label}: {status} ({took:.1f} s)"
        if error and status != "ok":
            line += f" - {error[:300]}"
        if self._bar:
            self._bar.update(self._task, completed=self.count, total=self.total)
            if status not in ("ok", "unsupported"):
                self._bar.console.print(terminal.safe(line))
            return
        self.stream.write(terminal.safe(line + self.times_text()) + "\n")
        self.stream.flush()

    def skip(self) -> None:
        self.count += 1
        if self._bar:
            self._bar.update(self._task, completed=self.count, total=self.total)

    def close(self) -> None:
        self.live = False  # a measurement after the end draws no bar again
        if self._bar:
            self._bar.stop()
            self._bar = None

    def left_s(self) -> float | None:
        """The time the measurements still to come should take, at the pace so far."""
        if not self.count:
            return None
        return self.measuring_s / self.count * max(self.total - self.count, 0)

    def times_text(self) -> str:
        """"; 1 min 10 s elapsed, about 4 min 50 s left" once the run has lasted ETA_AFTER_S."""
        elapsed = time.monotonic() - self.began
        left = self.left_s()
        if elapsed < ETA_AFTER_S or left is None:
            return ""
        return f"; {duration(elapsed)} elapsed, about {duration(left)} left"

    def _show(self, detail: str) -> None:
        if self._bar:
            self._bar.update(self._task, description=terminal.safe(self.label) + detail, total=self.total)
