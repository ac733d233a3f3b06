"""The histogram layout every worker implements (one function per language, the same vectors)."""

import pytest

from msgbench.core import histogram

# v -> bucket index: the vectors each language's histogram function is tested against.
# Worked by hand: 10**6 has 20 bits, so shift 13 and index 13 * 64 + (10**6 >> 13) = 832 + 122.
VECTORS = [(0, 0), (1, 1), (127, 127), (128, 128), (129, 128), (255, 191), (256, 192), (1000, 317),
           (65535, 703), (10**6, 954), (10**9, 1591), (2**40, 2240), (2**62, 3648)]


@pytest.mark.parametrize(("value", "bucket"), VECTORS)
def test_index_vectors(value, bucket):
    assert histogram.index(value) == bucket


def test_every_value_lies_in_its_bucket_and_buckets_are_narrow():
    for value in [*range(0, 5000, 7), 123_456_789, 2**40 + 12345, 2**63 - 1]:
        lower, width = histogram.bounds(histogram.index(value))
        assert lower <= value < lower + width
        assert width == 1 or width / lower <= 1 / 64


def test_negative_values_count_as_zero():
    assert histogram.index(-5) == 0


def test_percentile_is_the_midpoint_of_the_bucket_at_the_rank_capped_at_the_maximum():
    buckets = histogram.counts(histogram.record([10] * 98 + [1000, 5000]))
    assert histogram.percentile(buckets, 50) == 10
    assert histogram.percentile(buckets, 99) == 1000 - 1000 % 8 + 3.5  # 1000 lies in [1000, 1008)
    assert histogram.percentile(buckets, 100, maximum=5000) == 5000  # the bucket's midpoint is above it
    assert histogram.percentile({}, 99) == 0.0


def test_percentile_rank_rounds_up():
    buckets = histogram.counts(histogram.record([1, 2, 3, 4]))
    assert [histogram.percentile(buckets, q) for q in (0, 25, 26, 50, 75, 100)] == [1, 1, 2, 2, 3, 4]


@pytest.mark.parametrize("bad", ["x", [[1]], [[1, 0]], [[-1, 2]], [[1, 2.5]], [[True, 1]], [[10**9, 1]]])
def test_malformed_histograms_are_named(bad):
    with pytest.raises(histogram.HistogramError, match="latency_ns"):
        histogram.counts(bad, "latency_ns")
