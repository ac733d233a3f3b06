"""The Mann-Whitney U test behind `msgbench compare` and the tables' ≈, and its limits."""

import pytest

from msgbench.data import stats


def test_samples_wholly_apart_get_the_smallest_p_there_is():
    apart = stats.mann_whitney([1.0, 2.0, 3.0, 4.0, 5.0], [6.0, 7.0, 8.0, 9.0, 10.0])
    assert apart.method == "exact"
    assert apart.p_value == pytest.approx(stats.smallest_p_value(5, 5)) == pytest.approx(2 / 252)


def test_interleaved_samples_do_not_differ():
    assert stats.mann_whitney([1.0, 3.0, 5.0, 7.0, 9.0], [2.0, 4.0, 6.0, 8.0, 10.0]).p_value > 0.5


def test_ties_fall_back_to_the_normal_approximation():
    test = stats.mann_whitney([1.0, 1.0, 2.0, 3.0], [1.0, 4.0, 5.0, 6.0])
    assert test.method == "normal" and 0 < test.p_value < 1


def test_four_repetitions_a_side_are_the_fewest_that_can_differ_at_five_percent():
    assert stats.smallest_p_value(3, 3) == pytest.approx(0.1)
    assert stats.smallest_p_value(3, 4) == pytest.approx(2 / 35)  # still above 0.05
    assert stats.smallest_p_value(4, 4) == pytest.approx(2 / 70)
    assert stats.fewest_repetitions_to_differ(0.05) == 4
    assert stats.fewest_repetitions_to_differ(0.01) == 5  # 2/252 = 0.0079
