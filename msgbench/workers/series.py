"""A worker's time series, kept on disk while the worker runs, not in the harness's memory.

A worker sends a sample about once a second (spec/message.schema.json "sample"), and the
harness stores them with the measurement. Kept in memory until then, they were the only
thing a long run's harness grew by: 5.9 MiB over a 30-minute chat soak as parsed dicts,
still 0.72 MiB (23.7 KiB a minute) held compactly (docs/measurements/issue-30-soak.md).
Each sample now goes, as the JSON the store will hold, to a file that has no name
(msgbench/core/spill.py), and the store writes the series from it
(docs/decisions.md, "Time series spilled to disk").
"""

from msgbench.core.spill import JsonLines


class SampleSeries:
    """Samples {"t_ms": ms, name: number, ...} in arrival order: only their count and the
    last t_ms are in memory (for the protocol's checks); `lines` holds the samples."""

    def __init__(self) -> None:
        self.lines = JsonLines()
        self._last_t_ms = None

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def last_t_ms(self):
        """The latest sample's t_ms, or None before the first."""
        return self._last_t_ms

    def append(self, t_ms, values: dict) -> None:
        self.lines.append({"t_ms": t_ms, **values})
        self._last_t_ms = t_ms

    def to_list(self) -> list[dict]:
        return list(self.lines)
