"""Values kept on disk, not in memory, as they arrive: one JSON line each in a file that
has no name.

A worker's time series grows by a sample a second for as long as it runs, and a long
run's harness must not grow with it (docs/decisions.md, "Time series spilled to disk").
The file is made with tempfile.TemporaryFile, which on Linux opens it unnamed
(O_TMPFILE) or unlinks it at once: nothing can be left behind, whatever ends the
harness (Ctrl-C, a crash, SIGKILL), because the kernel frees it with the last open
descriptor. It is opened with the first value, so a run without any opens no file.
"""

import json
import tempfile
from collections.abc import Iterator

from msgbench.core import jsonio


class JsonLines:
    """An append-only sequence of JSON values held in an unnamed temporary file."""

    def __init__(self) -> None:
        self._file = None
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def append(self, value) -> None:
        line = jsonio.dumps(value)  # before the file is touched: a value JSON cannot hold leaves it as it was
        if self._file is None:
            self._file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 -- open as long as the object
        self._file.write(line + "\n")
        self._count += 1

    def _lines(self) -> Iterator[str]:
        if self._file is None:
            return
        self._file.flush()
        self._file.seek(0)
        try:
            for line in self._file:
                yield line.rstrip("\n")
        finally:
            self._file.seek(0, 2)  # appends go on at the end

    def __iter__(self) -> Iterator:
        return (json.loads(line) for line in self._lines())

    def json_array(self) -> str:
        """The values as one JSON array, the very text jsonio.dumps(list(self)) gives,
        as the store writes a list."""
        return "[" + ", ".join(self._lines()) + "]"

    def close(self) -> None:
        """Free the file (also done when the object is collected); the values are gone."""
        if self._file is not None:
            self._file.close()
            self._file = None
        self._count = 0
