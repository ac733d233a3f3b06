"""The latency histogram every worker reports: log-linear, 64 sub-buckets per power of two.

Workers only count values into buckets (one small function per language, tested
against the same vectors as this module); the harness alone turns the counts into
percentiles. A histogram travels as a sparse list of [bucket_index, count] pairs.

For a value v >= 0 (ns): v < 128 is its own bucket (exact); otherwise
shift = bit_length(v) - 7 and index = shift * 64 + (v >> shift), so a bucket is
never wider than 1/64 of the values it holds (under 1.6 % error).
"""

import math
from collections.abc import Iterable

SUB_BUCKETS = 64
EXACT_BELOW = 2 * SUB_BUCKETS  # 128


class HistogramError(ValueError):
    """A histogram that is not a list of [bucket_index, count] pairs."""


def index(value: int) -> int:
    """The bucket a value (ns) falls in; negative values count as 0."""
    value = max(int(value), 0)
    if value < EXACT_BELOW:
        return value
    shift = value.bit_length() - 7
    return shift * SUB_BUCKETS + (value >> shift)


LARGEST_INDEX = index(2**63 - 1)  # the last bucket a signed 64-bit count of ns can reach


def bounds(bucket: int) -> tuple[int, int]:
    """(lowest value, width) of a bucket."""
    if bucket < EXACT_BELOW:
        return bucket, 1
    shift = bucket // SUB_BUCKETS - 1
    return (bucket - shift * SUB_BUCKETS) << shift, 1 << shift


def counts(pairs: object, name: str = "histogram") -> dict[int, int]:
    """A reported histogram as {bucket: count}, checked: every error names the pair."""
    if not isinstance(pairs, list):
        raise HistogramError(f"{name}: expected a list of [bucket_index, count] pairs, got {type(pairs).__name__}")
    found: dict[int, int] = {}
    for position, pair in enumerate(pairs):
        ok = (isinstance(pair, list) and len(pair) == 2
              and all(isinstance(x, int) and not isinstance(x, bool) for x in pair)
              and 0 <= pair[0] <= LARGEST_INDEX and pair[1] > 0)
        if not ok:
            raise HistogramError(f"{name}[{position}] = {pair!r}: expected [bucket_index, count] with "
                                 f"0 <= bucket_index <= {LARGEST_INDEX} and count > 0")
        found[pair[0]] = found.get(pair[0], 0) + pair[1]
    return found


def total(buckets: dict[int, int]) -> int:
    return sum(buckets.values())


def percentile(buckets: dict[int, int], q: float, maximum: float | None = None) -> float:
    """The value at percentile q (0-100): the midpoint of the bucket holding the value of
    rank ceil(q/100 * total), never above the measured maximum. 0 for an empty histogram."""
    if not 0 <= q <= 100:
        raise HistogramError(f"percentile q = {q!r}: expected 0 to 100")
    n = total(buckets)
    if n == 0:
        return 0.0
    rank = max(1, math.ceil(q / 100 * n))
    seen = 0
    for bucket in sorted(buckets):
        seen += buckets[bucket]
        if seen >= rank:
            lower, width = bounds(bucket)
            middle = lower + (width - 1) / 2
            return min(middle, maximum) if maximum is not None else middle
    raise AssertionError("unreachable: rank <= total")


def record(values: Iterable[int]) -> list[list[int]]:
    """Values as a sparse histogram (for tests and Python workers)."""
    found: dict[int, int] = {}
    for value in values:
        bucket = index(value)
        found[bucket] = found.get(bucket, 0) + 1
    return [[bucket, found[bucket]] for bucket in sorted(found)]
