"""A/B comparison, per matching point: medians, ratio, Mann-Whitney U and a verdict.

A side is a run, or one build within a run (`RUN@BUILD`): `compare A B` compares two
runs or two builds; `compare RUN` compares each build of a run with its first one;
`check BASE CANDIDATE --max-slowdown 5%` says which points got significantly worse
by more than the threshold.
"""

import math
from dataclasses import dataclass

from msgbench.core import spec
from msgbench.data import stats, verdict
from msgbench.data.points import describe, same_point_key
from msgbench.data.verdict import ALPHA

# check's outcomes, and the exit code each gives (usage errors give cli.EXIT_USAGE, 2).
NO_REGRESSION, REGRESSION, INCONCLUSIVE = "no regression", "regression", "inconclusive"
CHECK_EXIT = {NO_REGRESSION: 0, REGRESSION: 1, INCONCLUSIVE: 3}


@dataclass(frozen=True)
class Side:
    """One side of a comparison: a run's measurements, or those of one of its builds."""

    name: str  # as the verdict says it: a run id, or a build label
    measurements: list[dict]


def side(run: dict, build: str | None = None, name: str | None = None) -> Side:
    """The run, or only its measurements on build (the build's name then set aside, so
    that the same point on two builds matches)."""
    if build is None:
        return Side(name or run.get("id") or "run", run["measurements"])
    chosen = [m | {"build": ""} for m in run["measurements"] if (m.get("build") or "") == build]
    return Side(name or build, chosen)


def builds_of(run: dict) -> list[str]:
    """The builds a run measured, in the order it first measured them."""
    return list(dict.fromkeys(m.get("build") or "" for m in run["measurements"] if m.get("build")))


def _points(measurements: list[dict]) -> dict:
    """Measured values per point, keyed so that the same point of two sides matches."""
    points = {}
    for m in measurements:
        if m["warmup"]:
            continue
        entry = points.setdefault(same_point_key(m), {"m": m, "values": {}, "statuses": []})
        entry["statuses"].append(m["status"])
        if m["status"] == "ok":
            for name, value in m["metrics"].items():
                entry["values"].setdefault(name, []).append(value)
    return points


def compare(a: Side, b: Side, metric: str | None = None) -> list[dict]:
    """One row per point both sides measured."""
    a_points, b_points = _points(a.measurements), _points(b.measurements)
    rows = []
    for key in [k for k in a_points if k in b_points]:
        pa, pb = a_points[key], b_points[key]
        m = pa["m"]
        wl = spec.workload(m["workload"])
        name = metric or wl.primary_metric
        build = m.get("build") or ""
        row = {"workload": m["workload"], "target": m["target"] + (f"@{build}" if build else ""),
               "variant": m["variant"], "point": describe(m["params"], first=m.get("sweep")),
               "metric": name, "a": a.name, "b": b.name, "better": wl.metric_better(name)}
        va, vb = pa["values"].get(name, []), pb["values"].get(name, [])
        row |= {"ok_a": len(va), "ok_b": len(vb)}
        if not va or not vb:
            row["verdict"] = (f"no numbers to compare ({a.name}: {', '.join(sorted(set(pa['statuses'])))}; "
                              f"{b.name}: {', '.join(sorted(set(pb['statuses'])))})")
            rows.append(row)
            continue
        ma, mb = stats.summarize(va).median, stats.summarize(vb).median
        judged = verdict.judge(a.name, va, b.name, vb, row["better"], name)
        test = stats.mann_whitney(va, vb)
        row |= {"median_a": ma, "median_b": mb, "ratio": mb / ma if ma else None,
                "p_value": test.p_value, "n_a": len(va), "n_b": len(vb), "judgement": judged,
                "detectable": verdict.detectable_change(va, vb)}
        row["worse_by"] = _worse_by(row)
        row["significant"] = test.p_value < ALPHA and not judged.unstable
        row["verdict"] = judged.text if judged.unstable else _verdict(row)
        rows.append(row)
    return rows


def compare_runs(run_a: dict, run_b: dict, metric: str | None = None) -> list[dict]:
    return compare(side(run_a, name="A"), side(run_b, name="B"), metric)


def compare_builds(run: dict, metric: str | None = None) -> list[dict]:
    """Each build of the run against the first it measured (the baseline)."""
    builds = builds_of(run)
    rows = []
    for other in builds[1:]:
        rows += compare(side(run, builds[0]), side(run, other), metric)
    return rows


def _worse_by(row: dict) -> float | None:
    """How much worse B is than A, as a fraction (negative: better); None when the
    metric has no better direction or A is zero."""
    if not row["ratio"] or row["better"] == "none":
        return None
    change = row["ratio"] - 1
    return -change if row["better"] == "higher" else change


def _verdict(row: dict) -> str:
    if row["p_value"] >= ALPHA:
        return row["judgement"].text  # no significant difference, or why the data cannot say
    change = row["ratio"] - 1
    if row["worse_by"] is None:
        return f"{row['b']} differs by {change:+.1%} (p = {row['p_value']:.3f})"
    word = "worse" if row["worse_by"] > 0 else "better"
    return f"{row['b']} is {abs(change):.1%} {word}: {row['metric']} {change:+.1%} (p = {row['p_value']:.3f})"


def regressions(rows: list[dict], max_slowdown: float) -> list[dict]:
    """Points significantly worse by more than max_slowdown (a fraction: 0.05 is 5%)."""
    return [r for r in rows if check_outcome(r, max_slowdown) == REGRESSION]


def check_outcome(row: dict, max_slowdown: float) -> str:
    """A point's outcome in `check`: a regression (significantly worse by more than the
    threshold), inconclusive (not significantly worse, but its repetitions could not have
    told a change of the threshold's size from noise), else no regression."""
    if "judgement" not in row or row["judgement"].unstable:  # no numbers on a side, or two groups
        return INCONCLUSIVE
    if row["significant"]:
        if row["worse_by"] is not None and row["worse_by"] > max_slowdown:
            return REGRESSION
        return NO_REGRESSION
    return INCONCLUSIVE if row["detectable"] > max_slowdown else NO_REGRESSION


def check_summary(rows: list[dict], max_slowdown: float) -> tuple[str, str]:
    """check's outcome over every point (any regression, else any inconclusive point, else
    no regression) and its one-line answer."""
    outcomes = [check_outcome(r, max_slowdown) for r in rows]
    threshold = f"{max_slowdown:.1%}"
    if REGRESSION in outcomes:
        return REGRESSION, (f"regression: {outcomes.count(REGRESSION)} of {len(rows)} points significantly "
                            f"worse by more than {threshold}")
    if INCONCLUSIVE in outcomes:
        unclear = [r for r, o in zip(rows, outcomes, strict=True) if o == INCONCLUSIVE]
        smallest = min((r.get("detectable", math.inf) for r in unclear), default=math.inf)
        worst = max((r.get("detectable", math.inf) for r in unclear), default=math.inf)
        can = ("no change at all (too few repetitions to ever reach p<0.05; repeat at least "
               f"{stats.fewest_repetitions_to_differ(ALPHA)} times a side)" if math.isinf(smallest)
               else f"only a change of about {_percent(smallest)}"
               + (f" (up to {_percent(worst)})" if worst > smallest else "") + " or more")
        return INCONCLUSIVE, (f"inconclusive: {len(unclear)} of {len(rows)} points cannot show a "
                              f"{threshold} slowdown: their repetitions could detect {can}")
    return NO_REGRESSION, f"no regression: no point significantly worse by more than {threshold} ({len(rows)} points)"


def _percent(fraction: float) -> str:
    return "every change" if math.isinf(fraction) else f"{fraction:.0%}" if fraction >= 0.1 else f"{fraction:.1%}"


def missing(a: Side, b: Side) -> list[str]:
    """The points a measured and b did not (a check's baseline points the candidate lacks)."""
    b_points = _points(b.measurements)
    return [_point_text(p["m"]) for key, p in _points(a.measurements).items() if key not in b_points]


def without_numbers(rows: list[dict], side_key: str = "b") -> list[dict]:
    """Rows where a side (b: the candidate) has no successful repetition of the metric."""
    return [r for r in rows if not r[f"ok_{side_key}"]]


def _point_text(m: dict) -> str:
    build = m.get("build") or ""
    return (f"{m['workload']} {m['target']}{'@' + build if build else ''}/{m['variant']} "
            f"{describe(m['params'], first=m.get('sweep'))}")
