"""The capacity search's logic (msgbench/running/capacity.py), without processes: systems that
hold every load up to a known one, judged by a rule."""

import itertools

import pytest

from msgbench.core import histogram
from msgbench.running import capacity
from msgbench.running.capacity import Observation, Search


def search_against(knee: float, **options) -> Search:
    """Run a search against a system that holds every load up to knee, and no more."""
    search = Search(**options)
    while (probe := search.next()) is not None:
        search.record(probe.load, probe.load <= knee)
    return search


@pytest.mark.parametrize("knee", [1_000, 1_500, 20_000, 33_333, 123_457, 999_999])
def test_the_search_finds_a_known_capacity_within_two_percent_in_bounded_steps(knee):
    search = search_against(knee, start=1000)
    assert search.status == capacity.FOUND
    assert knee * 0.98 <= search.capacity <= knee
    # doublings to pass the knee + bisection to 2% (log2(50) < 6) + the 2 confirming runs
    ramp = 1 + max(0, (knee / 1000 - 1e-9).__ceil__().bit_length())
    assert search.steps <= ramp + 7 + 2
    assert search.runs[search.capacity] == 3


def test_the_top_is_confirmed_by_three_runs_and_a_failed_confirmation_moves_the_bracket_down():
    # Holds up to 19,000; loads up to 10% above hold the first time they are tried and
    # fail whenever tried again: a top that held by luck is not the capacity.
    tried: dict[float, int] = {}
    search = Search(start=1000)
    while (probe := search.next()) is not None:
        tried[probe.load] = tried.get(probe.load, 0) + 1
        lucky = 19_000 < probe.load <= 20_900 and tried[probe.load] == 1
        search.record(probe.load, probe.load <= 19_000 or lucky)
    assert search.status == capacity.FOUND
    assert 19_000 * 0.98 <= search.capacity <= 19_000
    assert search.runs[search.capacity] == 3
    assert search.steps <= 30


def test_a_system_that_never_holds_says_so():
    search = search_against(1, start=1000)
    assert search.status == capacity.NEVER and search.capacity is None
    assert search.steps == 1 + capacity.MAX_HALVINGS
    assert "no load held" in search.why


def test_a_first_load_too_high_goes_down_and_still_finds_the_capacity():
    search = search_against(300, start=1000)
    assert search.status == capacity.FOUND and 300 * 0.98 <= search.capacity <= 300


def test_holding_at_the_machines_limit_is_said_as_the_result():
    search = search_against(10**9, start=1000, limit=19_700, quantize=round, limit_why="file descriptors")
    assert search.status == capacity.MACHINE_LIMIT
    assert search.capacity == 19_700
    assert "19,700" in search.why and "file descriptors" in search.why and "at least" in search.why


def test_integer_loads_stop_when_the_bracket_cannot_be_split():
    search = search_against(7, start=2, quantize=round, precision=0.001)
    assert search.status == capacity.FOUND and search.capacity == 7


def test_a_search_that_cannot_converge_stops_at_its_step_limit():
    search = search_against(20_000, start=1000, max_steps=5)
    assert search.status == capacity.STEP_LIMIT and search.steps == 5


def test_a_verdict_for_a_load_not_proposed_is_refused():
    search = Search(start=1000)
    with pytest.raises(ValueError, match="proposed 1000"):
        search.record(2000, True)


# ---------------------------------------------------------------- the bound


def test_slo_parsing():
    slo = capacity.parse_slo(["p99=5ms"])
    assert (slo.percentile, slo.bound_ns, slo.loss) == (99.0, 5e6, None)
    slo = capacity.parse_slo(["p99.9=250us,loss=0.1%"])
    assert (slo.percentile, slo.bound_ns, slo.loss) == (99.9, 250e3, 0.001)
    assert slo.describe().startswith("p99.9 <= 250 us, loss <= 0.1%")


@pytest.mark.parametrize("text, message", [
    ("p99", "expected NAME=VALUE"),
    ("p101=5ms", "'p101' is no bound"),
    ("q99=5ms", "'q99' is no bound"),
    ("p99=5", "'5' is no latency bound"),
    ("p99=-5ms", "'-5ms' is no latency bound"),
    ("loss=2", "'2' is no loss bound"),
    ("loss=0", "names no percentile"),
    ("p99=5ms,p50=1ms", "a second percentile bound"),
])
def test_bad_slos_are_refused_in_one_line_naming_the_value(text, message):
    with pytest.raises(capacity.SloError, match=message) as caught:
        capacity.parse_slo([text])
    assert "\n" not in str(caught.value)


def observation(offered, latencies_ns, achieved=None, status="ok", loss=0.0):
    return Observation(offered=offered, status=status, achieved=offered if achieved is None else achieved,
                       latency=histogram.counts(histogram.record(latencies_ns)),
                       latency_max_ns=max(latencies_ns), loss_ratio=loss)


def test_judge_needs_the_rate_delivered_no_loss_beyond_the_bound_and_the_percentile_under_it():
    slo = capacity.parse_slo(["p99=5ms,loss=0"])
    fast = [1_000_000] * 1000
    assert capacity.judge(slo, [observation(1000, fast)]).held
    assert "achieved 980 of 1,000" in capacity.judge(slo, [observation(1000, fast, achieved=980)]).why
    assert "loss" in capacity.judge(slo, [observation(1000, fast, loss=0.01)]).why
    slow = [1_000_000] * 980 + [9_000_000] * 20
    verdict = capacity.judge(slo, [observation(1000, slow)])
    assert not verdict.held and verdict.why == "p99 8.98 ms > 5 ms"
    failed = capacity.judge(slo, [Observation(1000, "failed", error="verification failed")])
    assert not failed.held and "verification failed" in failed.why


def test_repetitions_merge_their_histograms_rather_than_average_their_percentiles():
    # Two runs, each with p99 under 5 ms; together 2% of the values are slow, so the
    # merged p99 is over the bound (an average of the runs' p99s would say under).
    slo = capacity.parse_slo(["p99=5ms"])
    one = observation(1000, [1_000_000] * 990 + [4_000_000] * 10)
    two = observation(1000, [1_000_000] * 970 + [30_000_000] * 30)
    assert capacity.judge(slo, [one]).held
    assert not capacity.judge(slo, [one, two]).held
    buckets, maximum = capacity.merged([one, two])
    assert histogram.total(buckets) == 2000 and maximum == 30_000_000


def test_the_knee_is_before_the_steepest_rise_and_absent_on_a_flat_curve():
    slo = capacity.parse_slo(["p99=5ms"])
    loads = {1000: 1e6, 2000: 1.1e6, 4000: 1.2e6, 8000: 40e6, 16000: 90e6}
    points = capacity.curve(slo, {load: [observation(load, [int(ns)] * 100)] for load, ns in loads.items()})
    assert capacity.knee(points).offered == 4000
    assert [p.held for p in points] == [True, True, True, False, False]
    flat = capacity.curve(slo, {load: [observation(load, [1_000_000] * 100)] for load in loads})
    assert capacity.knee(flat) is None


def test_the_spectrum_halves_the_distance_to_100_and_ends_at_the_maximum():
    values = list(range(1000, 1_001_000, 1000))  # 1,000 values
    buckets = histogram.counts(histogram.record(values))
    found = capacity.spectrum(buckets, max(values))
    qs = [q for q, _ in found]
    assert qs[:4] == [0.0, 50.0, 75.0, 87.5] and qs[-1] == 100.0
    assert found[-1][1] == 1_000_000
    assert all(a[1] <= b[1] for a, b in itertools.pairwise(found))


def test_a_start_above_the_machines_limit_starts_at_the_limit():
    search = Search(start=50_000, limit=19_700, quantize=round)
    assert search.next().load == 19_700
