#!/usr/bin/env python3
"""How well two sets of runs of the same commands agree: the figure behind "numbers that
reproduce" (docs/methodology.md).

    scripts/reproducibility.py --first RUN,RUN,... --second RUN,RUN,... [--store FILE]

Each point (workload, target, variant, parameters) of the first set is matched with the
same point of the second, as `msgbench compare` matches them. For each it prints both
medians of the judged metric (the one the tables lead with), their ratio and both CVs;
then how many medians agree within 5%, and the median and 90th percentile of the CVs.
Last, the rankings: every pair of targets of one scenario and x that the first set tells
apart (Mann-Whitney U, p < 0.05) must come in the same order in the second.
"""

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from msgbench.core import spec  # noqa: E402
from msgbench.core.paths import default_store_path  # noqa: E402
from msgbench.data import points, results, stats  # noqa: E402
from msgbench.data.store import Store  # noqa: E402

AGREE = 0.05


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--first", required=True, help="comma-separated run ids")
    parser.add_argument("--second", required=True, help="comma-separated run ids, the same commands again")
    parser.add_argument("--store", type=Path, default=default_store_path())
    args = parser.parse_args()
    store = Store(args.store)
    first, second = (_points(store, text.split(",")) for text in (args.first, args.second))
    rows, cvs, agree = [], [], 0
    for key, a in first.items():
        b = second.get(key)
        if b is None:
            continue
        metric, ma, mb = a["judged"], a["median"], b["median"]
        ratio = mb / ma if ma else float("nan")
        cvs += [a["cv"], b["cv"]]
        ok = abs(ratio - 1) <= AGREE
        agree += ok
        rows.append(f"{'  ' if ok else '!!'} {a['label']:<55} {metric:<22} {ma:>12.4g} {mb:>12.4g} "
                    f"{ratio:6.3f}x  cv {a['cv']:5.1%} {b['cv']:5.1%}")
    print("\n".join(rows))
    if not rows:
        print("no point of the first set is in the second")
        return 1
    cvs.sort()
    p90 = cvs[min(len(cvs) - 1, int(0.9 * len(cvs)))]
    print(f"\n{agree} of {len(rows)} medians agree within {AGREE:.0%}; cv median {statistics.median(cvs):.1%}, "
          f"p90 {p90:.1%}, max {cvs[-1]:.1%} ({len(cvs)} point-runs)")
    kept, flipped = _rankings(first, second)
    print(f"rankings: {kept} significant pairs of the first set kept their order in the second"
          + (f"; {len(flipped)} did not: {'; '.join(flipped)}" if flipped else ""))
    return 0


def _rankings(first: dict, second: dict) -> tuple[int, list[str]]:
    kept, flipped = 0, []
    by_place: dict[tuple, list] = {}
    for key, a in first.items():
        by_place.setdefault(a["place"], []).append(key)
    for keys in by_place.values():
        for i, ka in enumerate(keys):
            for kb in keys[i + 1:]:
                a, b = first[ka], first[kb]
                if stats.mann_whitney(a["values"], b["values"]).p_value >= 0.05 or ka not in second or kb not in second:
                    continue
                if (a["median"] > b["median"]) == (second[ka]["median"] > second[kb]["median"]):
                    kept += 1
                else:
                    flipped.append(f"{a['label']} vs {b['label']}")
    return kept, flipped


def _points(store: Store, run_ids: list[str]) -> dict:
    found = {}
    for run_id in run_ids:
        doc = results.run_document(store, [store.resolve(run_id.strip())])
        for s in doc["runs"][0]["summary"]:
            wl = spec.workloads().get(s["workload"])
            judged = wl.judged_metric(s["params"]) if wl else None
            metric = (s.get("metrics") or {}).get(judged)
            if not metric or s["status"] != "ok":
                continue
            found[points.same_point_key(s)] = {
                "label": f"{s['scenario']} {points.target_label(s)} {s.get('x') if s.get('sweep') else ''}".strip(),
                "judged": judged, "median": metric["median"], "cv": metric.get("cv") or 0.0,
                "values": metric.get("values") or [], "place": (s["workload"], s["scenario"], points.canonical(s["x"]),
                                                                points.canonical(s["params"]))}
    return found


if __name__ == "__main__":
    sys.exit(main())
