"""A/B comparison, per matching point: medians, ratio, Mann-Whitney U and a verdict.

A side is a run, or one build within a run (`RUN@BUILD`): `compare A B` compares two
runs or two builds; `compare RUN` compares each build of a run with its first one;
`check BASE CANDIDATE --max-slowdown 5%` says which points got significantly worse
by more than the threshold.
"""

from dataclasses import dataclass

from msgbench import spec, stats, units
from msgbench.points import describe, same_point_key

ALPHA = 0.05


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
        if not va or not vb:
            row["verdict"] = (f"no numbers to compare ({a.name}: {', '.join(sorted(set(pa['statuses'])))}; "
                              f"{b.name}: {', '.join(sorted(set(pb['statuses'])))})")
            rows.append(row)
            continue
        ma, mb = stats.summarize(va).median, stats.summarize(vb).median
        test = stats.mann_whitney(va, vb)
        row |= {"median_a": ma, "median_b": mb, "ratio": mb / ma if ma else None,
                "p_value": test.p_value, "n_a": len(va), "n_b": len(vb)}
        row["worse_by"] = _worse_by(row)
        row["significant"] = test.p_value < ALPHA
        row["verdict"] = _verdict(row)
        split = _two_groups(a.name, va) or _two_groups(b.name, vb)
        if split:  # a median that lands in either group: no ratio of it says anything
            row["significant"] = False
            row["verdict"] = f"inconclusive: its repetitions fall in two groups ({split})"
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


def _two_groups(name: str, values: list[float]) -> str | None:
    groups = stats.two_groups(values)
    return f"{name}: {stats.groups_text(groups, units.number)}" if groups else None


def _verdict(row: dict) -> str:
    if row["p_value"] >= ALPHA:
        if stats.smallest_p_value(row["n_a"], row["n_b"]) >= ALPHA:
            return (f"no significant difference possible: {row['n_a']} vs {row['n_b']} repetitions can never "
                    f"reach p < {ALPHA}; repeat more (--repeat 5)")
        return f"no significant difference (p = {row['p_value']:.2f})"
    change = row["ratio"] - 1
    if row["worse_by"] is None:
        return f"{row['b']} differs by {change:+.1%} (p = {row['p_value']:.3f})"
    word = "worse" if row["worse_by"] > 0 else "better"
    return f"{row['b']} is {abs(change):.1%} {word}: {row['metric']} {change:+.1%} (p = {row['p_value']:.3f})"


def regressions(rows: list[dict], max_slowdown: float) -> list[dict]:
    """Points significantly worse by more than max_slowdown (a fraction: 0.05 is 5%)."""
    return [r for r in rows if r.get("significant") and r.get("worse_by") is not None
            and r["worse_by"] > max_slowdown]
