"""A worker's time series, held compactly while the worker runs.

A worker sends a sample about once a second (spec/message.schema.json "sample"), and the
harness keeps them until the measurement is stored. Kept as parsed, a chat server's sample
of 28 values took about 3 KB (a dict, and its own copy of every name and number): a
30-minute chat soak's harness grew 5.9 MiB, steadily, and a day's 86,400 samples would
take 300 MB. Here the names are one tuple shared by every sample that has them, and the
numbers one array of doubles: about 0.4 KB a sample.
"""

from array import array

# Integers a double holds exactly; a sample with a larger one is kept as it came.
EXACT_INT = 2**53


class SampleSeries:
    """Samples {"t_ms": ms, name: number, ...} in arrival order; to_list gives them back
    as they came (integers as integers)."""

    def __init__(self) -> None:
        self._names: dict[tuple, tuple] = {}  # each distinct tuple of names, shared
        self._samples: list = []  # (names, bit i set where value i was an int, array of values) or a dict
        self._last_t_ms = None

    def __len__(self) -> int:
        return len(self._samples)

    @property
    def last_t_ms(self):
        """The latest sample's t_ms, or None before the first."""
        return self._last_t_ms

    def append(self, t_ms, values: dict) -> None:
        sample = {"t_ms": t_ms, **values}
        numbers = list(sample.values())
        if any(isinstance(n, int) and abs(n) >= EXACT_INT for n in numbers):
            self._samples.append(sample)
        else:
            names = tuple(sample)
            names = self._names.setdefault(names, names)
            ints = sum(1 << i for i, n in enumerate(numbers) if isinstance(n, int))
            self._samples.append((names, ints, array("d", numbers)))
        self._last_t_ms = t_ms

    def to_list(self) -> list[dict]:
        return [sample if isinstance(sample, dict) else _expand(*sample) for sample in self._samples]


def _expand(names: tuple, ints: int, numbers: array) -> dict:
    return {name: int(n) if ints >> i & 1 else n for i, (name, n) in enumerate(zip(names, numbers, strict=True))}
