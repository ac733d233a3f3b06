"""One judgement of two sets of repetitions, shared by the Findings, the short answers
that end `run`, `show`, `compare` and `check`, and `check`'s outcome.

Three answers, never more certain than the data: a leader, named only where the
Mann-Whitney U test (compare.ALPHA, two-sided) says the two differ; "no significant
difference" where it does not and the repetitions are steady enough to have seen one;
"inconclusive: ..." where they could not have (too few repetitions a side to ever reach
p < ALPHA, or a spread, cv, wider than stats.NOISY_CV). A leader's margin is said as
hyperfine says it: "rust ran 1.25 ± 0.30 times faster than go", the ratio of the
medians with the two sides' relative spreads (stdev / mean) added in quadrature.
"""

import dataclasses
import math
from dataclasses import dataclass

from msgbench.core import units
from msgbench.data import stats

ALPHA = 0.05  # compare.ALPHA's value; compare imports it from here

LEADS, SAME, INCONCLUSIVE = "leads", "same", "inconclusive"

# Metrics whose better direction reads as speed: a rate, a bandwidth, a time.
_SPEED_SUFFIXES = ("_per_s", "_us", "_ms", "_ns", "_s")


@dataclass(frozen=True)
class Judgement:
    outcome: str  # LEADS, SAME or INCONCLUSIVE
    text: str  # the short human answer
    leader: str = ""
    other: str = ""
    ratio: float | None = None  # >= 1: how many times better the leader is
    error: float | None = None  # the ratio's ± (relative spreads in quadrature)
    p_value: float | None = None
    samples: tuple[int, int] = (0, 0)
    unstable: bool = False  # a side's repetitions fall in two groups (stats.two_groups)
    claim: str = ""  # text without its test statistic, where a column of its own gives that
    pair: str = ""  # "a vs b": who was compared, for a verdict that names no leader

    @property
    def named_text(self) -> str:
        """text, naming the two sides where it does not (several verdicts on one line)."""
        return self.text if self.outcome == LEADS else f"{self.pair}: {self.text}"

    @property
    def answer(self) -> str:
        """The claim alone ("rust ran 1.25 ± 0.30 times faster than go"), for a table whose
        significance column says p; text when there is no separate claim."""
        return self.claim or self.text

    @property
    def significant(self) -> bool:
        return self.outcome == LEADS


def too_few_text(n_a: int, n_b: int) -> str:
    """Why no difference between n_a and n_b repetitions can ever be significant."""
    sides = f"{n_a} a side" if n_a == n_b else f"{n_a} and {n_b} repetitions"
    return f"inconclusive: too few repetitions ({sides} can never reach p<{ALPHA})"


def judge(a_name: str, a: list[float], b_name: str, b: list[float], better: str,
          metric: str = "") -> Judgement:
    """Whether a or b is better at the metric (better: "higher" or "lower"), from their
    repetitions."""
    return dataclasses.replace(_judge(a_name, a, b_name, b, better, metric), pair=f"{a_name} vs {b_name}")


def _judge(a_name: str, a: list[float], b_name: str, b: list[float], better: str, metric: str) -> Judgement:
    n = (len(a), len(b))
    if not a or not b:
        missing = ", ".join(name for name, values in ((a_name, a), (b_name, b)) if not values)
        return Judgement(INCONCLUSIVE, f"inconclusive: no repetition of {missing} succeeded", samples=n)
    if stats.smallest_p_value(*n) >= ALPHA:
        return Judgement(INCONCLUSIVE, too_few_text(*n), samples=n)
    p = stats.mann_whitney(a, b).p_value
    split = [f"{name}: {stats.groups_text(groups, units.number)}" for name, values in ((a_name, a), (b_name, b))
             if (groups := stats.two_groups(values))]
    if split:  # a median that lands in either group: no ratio of it says anything
        return Judgement(INCONCLUSIVE, f"inconclusive: its repetitions fall in two groups ({'; '.join(split)})",
                         p_value=p, samples=n, unstable=True)
    sa, sb = stats.summarize(a), stats.summarize(b)
    if p >= ALPHA:
        noisy = [(s.cv, name) for s, name in ((sa, a_name), (sb, b_name)) if s.cv > stats.NOISY_CV]
        if noisy:
            cv, name = max(noisy)
            claim = (f"inconclusive: cv {cv:.0%} for {name} (above {stats.NOISY_CV:.0%}) "
                     "could hide a difference")
            return Judgement(INCONCLUSIVE, f"{claim} (p = {p:.2f})", p_value=p, samples=n, claim=claim)
        return Judgement(SAME, f"no significant difference (p = {p:.2f})", p_value=p, samples=n,
                         claim="no significant difference")
    a_wins = (sa.median > sb.median) == (better == "higher")
    (win, wname), (lose, lname) = ((sa, a_name), (sb, b_name)) if a_wins else ((sb, b_name), (sa, a_name))
    if not (win.median and lose.median) or better not in ("higher", "lower"):
        direction = "higher" if win.median > lose.median else "lower"
        claim = f"{wname} {metric or 'value'} is {direction} than {lname}"
        return Judgement(LEADS, f"{claim} (p = {p:.3f})", leader=wname, other=lname, p_value=p,
                         samples=n, claim=claim)
    ratio = win.median / lose.median if better == "higher" else lose.median / win.median
    error = ratio * math.hypot(_relative_spread(win), _relative_spread(lose))
    word = "ran" if metric.endswith(_SPEED_SUFFIXES) else "was"
    adjective = "faster" if metric.endswith(_SPEED_SUFFIXES) else "better"
    text = f"{wname} {word} {ratio:.2f} ± {error:.2f} times {adjective} than {lname}"
    return Judgement(LEADS, text + (f" ({metric}, p = {p:.3f})" if metric else f" (p = {p:.3f})"),
                     leader=wname, other=lname, ratio=ratio, error=error, p_value=p, samples=n,
                     claim=text)


def _relative_spread(s: stats.Summary) -> float:
    return s.stdev / abs(s.mean) if s.mean else 0.0


def detectable_change(a: list[float], b: list[float]) -> float:
    """The smallest relative change these repetitions could tell from noise, roughly: the
    standard error of the difference of two means, relative (the sides' cv over root n in
    quadrature), times the t quantile plus 0.84 (a 5% two-sided test with 80% power).
    Infinite when the sizes can never reach p < ALPHA, whatever the change."""
    if not a or not b or stats.smallest_p_value(len(a), len(b)) >= ALPHA:
        return math.inf
    sa, sb = stats.summarize(a), stats.summarize(b)
    spread = math.hypot(_relative_spread(sa) / math.sqrt(sa.n), _relative_spread(sb) / math.sqrt(sb.n))
    return (stats.t975(sa.n + sb.n - 2) + 0.84) * spread
