"""A/B comparison of two runs: per matching point, medians, ratio and significance."""

from math import comb

from msgbench import spec, stats
from msgbench.points import describe, same_point_key

ALPHA = 0.05


def _points(run: dict) -> dict:
    """Measured values per point, keyed so that the same point of two runs matches."""
    points = {}
    for m in run["measurements"]:
        if m["warmup"]:
            continue
        key = same_point_key(m)
        entry = points.setdefault(key, {"m": m, "values": {}, "statuses": []})
        entry["statuses"].append(m["status"])
        if m["status"] == "ok":
            for name, value in m["metrics"].items():
                entry["values"].setdefault(name, []).append(value)
    return points


def compare_runs(run_a: dict, run_b: dict, metric: str | None = None) -> list[dict]:
    a_points, b_points = _points(run_a), _points(run_b)
    rows = []
    for key in [k for k in a_points if k in b_points]:
        a, b = a_points[key], b_points[key]
        wl = spec.workload(key[0])
        name = metric or wl.primary_metric
        row = {"workload": key[0], "target": key[1], "variant": key[2],
               "point": describe(a["m"]["params"], first=a["m"].get("sweep")), "metric": name}
        va, vb = a["values"].get(name, []), b["values"].get(name, [])
        if not va or not vb:
            row["verdict"] = (f"no numbers to compare (A: {', '.join(sorted(set(a['statuses'])))}; "
                              f"B: {', '.join(sorted(set(b['statuses'])))})")
            rows.append(row)
            continue
        ma, mb = stats.summarize(va).median, stats.summarize(vb).median
        test = stats.mann_whitney(va, vb)
        row |= {"median_a": ma, "median_b": mb, "ratio": mb / ma if ma else None,
                "p_value": test.p_value, "n_a": len(va), "n_b": len(vb)}
        row["verdict"] = _verdict(row, wl.metric_better(name), test)
        rows.append(row)
    return rows


def _verdict(row: dict, better: str, test: stats.UTest) -> str:
    if test.p_value >= ALPHA:
        smallest = 2 / comb(row["n_a"] + row["n_b"], row["n_a"])
        if smallest >= ALPHA:
            return (f"not significant: {row['n_a']} vs {row['n_b']} repetitions can never reach "
                    f"p < {ALPHA}; repeat more (--repeat 5)")
        return f"not significant (p = {test.p_value:.2f})"
    change = row["ratio"] - 1
    if better == "none":
        return f"B differs by {change:+.1%} (p = {test.p_value:.3f})"
    improved = change > 0 if better == "higher" else change < 0
    return f"B is {'better' if improved else 'worse'}: {change:+.1%} (p = {test.p_value:.3f})"
