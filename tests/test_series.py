"""A worker's time series is held compactly while it runs and given back as it came."""

import json
import tracemalloc

from msgbench.workers.series import SampleSeries


def sample(k: int) -> dict:
    # the shape of a chat server's sample: counts, bytes and rates, ints and floats
    return {f"server_{kind}_bytes": 1_000_000 + 4096 * k + i for i, kind in enumerate(
        ["rss", "heap", "stack", "code", "atom", "binary", "ets", "processes", "system", "other"])} | {
        f"load_{kind}_per_s": 400.0 + k / 7 + i for i, kind in enumerate(["sent", "received", "joined"])} | {
        "gc_count": k * 3, "gc_pause_ns": 12_345.5 * k, "cpu_percent": 37.25, "processes_count": 2013,
        "huge_bytes": 2**60 + k if k == 7 else 0}


def test_samples_come_back_as_they_came():
    series = SampleSeries()
    expected = []
    for k in range(20):
        values = sample(k) if k != 3 else {"other_count": 1}  # a sample with other names
        series.append(k * 1000 + 0.5 * (k % 2), values)
        expected.append({"t_ms": k * 1000 + 0.5 * (k % 2), **values})
    assert len(series) == 20 and series.last_t_ms == 19_000.5
    got = series.to_list()
    assert json.dumps(got) == json.dumps(expected)  # ints stay ints: 1000, not 1000.0
    assert got[7]["huge_bytes"] == 2**60 + 7  # beyond a double's integers: kept exactly


def test_an_hour_of_samples_takes_well_under_half_a_kilobyte_each():
    # The 30-minute chat soak's harness grew 5.9 MiB: about 2.9 KB per sample kept as parsed.
    def held(store) -> int:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        kept = store()
        after = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        assert kept
        return (after - before) // 3600

    def compact():
        series = SampleSeries()
        for k in range(3600):
            series.append(k * 1000, json.loads(json.dumps(sample(k % 5))))  # parsed afresh, as a worker's line
        return series

    def as_parsed():
        return [{"t_ms": k * 1000, **json.loads(json.dumps(sample(k % 5)))} for k in range(3600)]

    per_sample, per_parsed = held(compact), held(as_parsed)
    assert per_sample < 500 < 4 * per_sample < per_parsed, (per_sample, per_parsed)
