"""Statistics over repetitions, and the significance test behind `msgbench compare`.

Benchmarks on a shared machine are noisy and samples are small (3-10 repetitions),
so the summary leads with the median, flags a wide spread, and the A/B test is the
distribution-free Mann-Whitney U test (exact for small samples without ties).
"""

import math
import statistics
from dataclasses import dataclass
from functools import cache

NOISY_CV = 0.10  # a coefficient of variation above this is called out as too noisy

# Two-sided 97.5% quantiles of Student's t for 1..30 degrees of freedom.
_T975 = [
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
]


def t975(df: int) -> float:
    return _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    min: float
    max: float
    mean: float
    stdev: float
    cv: float
    ci95: tuple[float, float]
    outliers: int
    values: tuple[float, ...]  # the repetitions' own, in order: what a significance test needs

    def as_dict(self) -> dict:
        return {
            "n": self.n, "median": self.median, "min": self.min, "max": self.max,
            "mean": self.mean, "stdev": self.stdev, "cv": self.cv, "ci95": list(self.ci95),
            "outliers": self.outliers, "values": list(self.values),
        }


def summarize(values: list[float]) -> Summary:
    """Median, spread and a t-based 95% confidence interval of the mean."""
    if not values:
        raise ValueError("no values to summarize")
    n = len(values)
    mean = statistics.fmean(values)
    stdev = statistics.stdev(values) if n > 1 else 0.0
    half = t975(n - 1) * stdev / math.sqrt(n) if n > 1 else 0.0
    return Summary(
        n=n, median=statistics.median(values), min=min(values), max=max(values), mean=mean,
        stdev=stdev, cv=stdev / mean if mean else 0.0, ci95=(mean - half, mean + half),
        outliers=count_outliers(values), values=tuple(values),
    )


def relative_precision(values: list[float]) -> float:
    """Half the 95% confidence interval of the mean, relative to the mean: 0.02 means the
    mean is known within ±2%. Infinite for fewer than two values or a zero mean."""
    if len(values) < 2:
        return math.inf
    s = summarize(values)
    return (s.ci95[1] - s.mean) / abs(s.mean) if s.mean else math.inf


def count_outliers(values: list[float]) -> int:
    """Values beyond Tukey's fences (1.5 interquartile ranges outside the quartiles)."""
    if len(values) < 4:
        return 0
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    low, high = q1 - 1.5 * (q3 - q1), q3 + 1.5 * (q3 - q1)
    return sum(1 for v in values if v < low or v > high)


def warnings_for(metric: str, s: Summary) -> list[tuple[str, str]]:
    """(kind, text) for each way the repetitions of a metric are too noisy or too few:
    kinds cv, outliers, few."""
    found = []
    if s.n > 1 and s.cv > NOISY_CV:
        found.append(("cv", f"{metric}: coefficient of variation {s.cv:.0%} (> {NOISY_CV:.0%}): too noisy to trust"))
    if s.outliers:
        found.append(("outliers", f"{metric}: {s.outliers} outlier(s) among {s.n} repetitions"))
    if s.n < 3:
        found.append(("few", f"{metric}: only {s.n} repetition(s): no spread to judge"))
    return found


# ---------------------------------------------------------------- two groups

# When are a point's repetitions two groups rather than one spread? Sorted, they are split
# at their largest gap; it is two groups when each side has at least MIN_GROUP values (one
# value apart is an outlier, counted as such) and the gap is
# - over GAP_OVER_SPREAD times the wider side's own range: drawn from one normal with a
#   cv of 10% (already "too noisy"), 4 repetitions pass that and the next rule in 4.5% of
#   draws, 5 in 2.7%, 7 in 0.4% (simulated; fewer still at a lower cv, as the gap must
#   also pass the next rule), while 3 + 2 draws around 14 and 30 (unbatched redis's two
#   states, cv 7%) pass in 96%;
# - over GAP_OVER_MEDIAN of the median: a smaller gap is within the spread the cv warning
#   already flags (NOISY_CV), and no verdict at the 5% a CI gate uses turns on it.
# docs/decisions.md ("Two groups of repetitions").
MIN_GROUP = 2
GAP_OVER_SPREAD = 3.0
GAP_OVER_MEDIAN = 0.10


@dataclass(frozen=True)
class Groups:
    low: tuple[float, ...]
    high: tuple[float, ...]

    def as_dict(self) -> dict:
        return {"groups": [{"median": statistics.median(g), "n": len(g)} for g in (self.low, self.high)]}


def two_groups(values: list[float]) -> Groups | None:
    """The repetitions' two groups, when they fall in two (see the thresholds above); None
    for one group, an outlier, or fewer than 2 * MIN_GROUP values."""
    ordered = sorted(values)
    if len(ordered) < 2 * MIN_GROUP:
        return None
    gaps = [(ordered[i + 1] - ordered[i], i) for i in range(len(ordered) - 1)]
    gap, at = max(gaps)
    low, high = ordered[:at + 1], ordered[at + 1:]
    if len(low) < MIN_GROUP or len(high) < MIN_GROUP:
        return None
    spread = max(low[-1] - low[0], high[-1] - high[0])
    if gap <= GAP_OVER_SPREAD * spread or gap <= GAP_OVER_MEDIAN * abs(statistics.median(ordered)):
        return None
    return Groups(tuple(low), tuple(high))


def groups_text(groups: Groups, number=str) -> str:
    """'two groups: 14.0k (3 reps) and 30.2k (2 reps)', the larger group first."""
    parts = sorted((groups.low, groups.high), key=len, reverse=True)
    return "two groups: " + " and ".join(f"{number(statistics.median(g))} ({len(g)} reps)" for g in parts)


# ---------------------------------------------------------------- Mann-Whitney U


@dataclass(frozen=True)
class UTest:
    u: float
    p_value: float
    method: str  # exact | normal


def mann_whitney(a: list[float], b: list[float]) -> UTest:
    """Two-sided Mann-Whitney U test of whether a and b come from one distribution."""
    if not a or not b:
        raise ValueError("both samples need at least one value")
    ranks = _ranks(a + b)
    r1 = sum(ranks[: len(a)])
    n1, n2 = len(a), len(b)
    u1 = r1 - n1 * (n1 + 1) / 2
    u = min(u1, n1 * n2 - u1)
    ties = len(set(a + b)) < n1 + n2
    if not ties and n1 * n2 <= 400:
        counts = _u_distribution(n1, n2)
        total = sum(counts)
        tail = sum(counts[: int(u) + 1]) / total
        return UTest(u=u1, p_value=min(1.0, 2 * tail), method="exact")
    n = n1 + n2
    tie_term = sum(t**3 - t for t in _tie_sizes(a + b)) / (n * (n - 1))
    sigma = math.sqrt(n1 * n2 / 12 * ((n + 1) - tie_term))
    if sigma == 0:
        return UTest(u=u1, p_value=1.0, method="normal")
    z = (abs(u1 - n1 * n2 / 2) - 0.5) / sigma
    p = math.erfc(max(z, 0) / math.sqrt(2))
    return UTest(u=u1, p_value=min(1.0, p), method="normal")


def smallest_p_value(n1: int, n2: int) -> float:
    """The smallest two-sided p mann_whitney can give n1 and n2 repetitions (exact, no
    ties): every value of one side below every value of the other. With 3 and 3 it is
    0.1, so no difference between them can be significant at 0.05."""
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def fewest_repetitions_to_differ(alpha: float) -> int:
    """The fewest repetitions a side, the same on both, with which mann_whitney can find a
    difference at alpha."""
    return next(n for n in range(1, 64) if smallest_p_value(n, n) < alpha)


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def _tie_sizes(values: list[float]) -> list[int]:
    return [values.count(v) for v in set(values) if values.count(v) > 1]


@cache
def _u_distribution(n1: int, n2: int) -> tuple[int, ...]:
    """counts[u] = number of orderings of n1+n2 distinct values giving statistic u."""
    if n1 == 0 or n2 == 0:
        return (1,)
    with_last_in_1 = _u_distribution(n1 - 1, n2)  # the largest value is in sample 1: adds n2
    with_last_in_2 = _u_distribution(n1, n2 - 1)
    size = n1 * n2 + 1
    counts = [0] * size
    for u, c in enumerate(with_last_in_1):
        counts[u + n2] += c
    for u, c in enumerate(with_last_in_2):
        counts[u] += c
    return tuple(counts)
