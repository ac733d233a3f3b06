"""The results document: runs with their measurements and per-point summaries.

This is the one shape every output is drawn from (terminal tables, JSON, CSV,
Markdown, the HTML report and the results page); docs/results-format.md describes it.
"""

import statistics
from collections import defaultdict

from msgbench.core import expr, histogram, spec, units
from msgbench.data import noise, stats
from msgbench.data.points import point_key

FORMAT_NAME = "msgbench-results"
FORMAT_VERSION = 1

# What each warning of a summary is about, in "warning_kinds" beside "warnings" (the
# same length): the terminal groups them, most serious first. A spec metric's
# "warn_kind" names the kind of its threshold warning.
FAILED, LOSS, RATE = "failed", "loss", "rate"
NOISE_KINDS = {"noise:cv": "too noisy (cv > 10%)", "noise:outliers": "outliers",
               "noise:few": "too few repetitions", "noise:short": "timed section under 50 ms",
               "noise:busy": "machine busy", "noise:precision": "precision not reached",
               "noise:clusters": "repetitions in two groups", "noise:builds": "measured beside builds"}


def summarize_run(measurements: list[dict], precision: float | None = None) -> list[dict]:
    """One summary per point; precision: the run's --precision, whose misses are said.

    A point whose warm-up did not succeed is stopped there (the runner measures no
    repetition after an unsupported or timed-out warm-up): it is summarised from that
    warm-up, so it keeps its row (go's n/a on exit signals) instead of vanishing."""
    groups: dict[tuple, list[dict]] = defaultdict(list)
    stopped: dict[tuple, list[dict]] = defaultdict(list)
    for m in measurements:
        if not m["warmup"]:
            groups[point_key(m)].append(m)
        elif m["status"] != "ok":
            stopped[point_key(m)].append(m)
    for key, warmups in stopped.items():
        if key not in groups:
            groups[key] = warmups
    return [_summarize_point(group, precision) for group in groups.values()]


def _summarize_point(group: list[dict], precision: float | None = None) -> dict:
    first = group[0]
    ok = [m for m in group if m["status"] == "ok"]
    summary = {
        "scenario": first["scenario"], "workload": first["workload"], "target": first["target"],
        "build": first.get("build") or "", "variant": first["variant"], "variant_label": first["variant_label"],
        "params": first["params"], "sweep": first["sweep"], "x": first["x"],
        "ok": len(ok), "total": len(group), "metrics": {}, "warnings": [], "warning_kinds": [],
    }
    summary.update(first.get("extra") or {})
    if ok:
        summary["status"] = "ok"
    else:
        statuses = [m["status"] for m in group]
        summary["status"] = max(set(statuses), key=statuses.count)
        summary["error"] = next((m["error"] for m in group if m.get("error")), None)
    warn = _warner(summary)
    if len(ok) < len(group):
        bad = [m for m in group if m["status"] != "ok"]
        warn(FAILED, f"{len(bad)} of {len(group)} repetitions did not succeed ({bad[0]['status']}: {bad[0]['error']})")
    names = sorted({name for m in ok for name in m["metrics"]})
    computed = {name: stats.summarize([m["metrics"][name] for m in ok if name in m["metrics"]])
                for name in names}
    summary["metrics"] = {name: s.as_dict() for name, s in computed.items()}
    wl = spec.workloads().get(first["workload"])
    for name, value in _merged(wl, first["params"], ok).items():
        if name in summary["metrics"]:
            summary["metrics"][name]["merged"] = value
    calibrated = next(((m.get("worker") or {}).get("calibrated") for m in ok
                       if (m.get("worker") or {}).get("calibrated")), None)
    if calibrated:  # the work it ran, raised from its params by the warm-up's calibration
        summary["calibrated"] = calibrated
    for text in _competition_warnings(ok):
        warn("noise:busy", text)
    for text in _short_run_warnings(wl, ok):
        warn("noise:short", text)
    for text in _beside_builds_warnings(ok):
        warn("noise:builds", text)
    # The noise of the figure the point is judged by (socket echo: its round trip), as
    # the tables, the report and the page show it.
    judged = wl and wl.judged_metric(first["params"])
    if judged and judged in computed:
        for kind, text in stats.warnings_for(judged, computed[judged]):
            warn(f"noise:{kind}", text)
        values = [m["metrics"][judged] for m in ok if judged in m["metrics"]]
        groups = stats.two_groups(values)
        if groups:  # its median lands in either group: the point is two states, not one figure
            summary["two_groups"] = {"metric": judged} | groups.as_dict()
            warn("noise:clusters", f"{judged}: {stats.groups_text(groups, units.number)}: its median lands in "
                                   f"either; do not compare it until the cause is known")
        reached = stats.relative_precision(values)
        if precision is not None and reached > precision:
            warn("noise:precision", f"{judged}: did not converge: ±{reached:.1%} after {len(values)} "
                                    f"repetitions, asked ±{precision:.1%} (raise --max-repeat, or quiet the machine)")
    if wl:
        for kind, text in _threshold_warnings(wl, computed, first["params"]):
            warn(kind, text)
    return summary


def _merged(wl, params: dict, ok: list[dict]) -> dict:
    """The point's percentile metrics over all its repetitions' histograms at once
    (spec.merged_metrics); none where a repetition kept no histograms (an import)."""
    runs = [((m.get("worker") or {}).get("measured"), (m.get("worker") or {}).get("histograms")) for m in ok]
    if not wl or not runs or any(not isinstance(f, dict) or not isinstance(h, dict) for f, h in runs):
        return {}
    try:
        return spec.merged_metrics(wl, params, runs)
    except (histogram.HistogramError, TypeError, ValueError):
        return {}  # a stored histogram that is not one (a hand-edited import): the medians stand


def point_value(stats: dict) -> float:
    """What a point's metric reads as, in tables, charts and findings: a percentile over all
    its repetitions' messages where it has one (their histograms merged), else the median
    of its repetitions. Comparisons between points test the repetitions, not this."""
    return stats.get("merged", stats["median"])


def _warner(summary: dict):
    def warn(kind: str, text: str) -> None:
        summary["warnings"].append(text)
        summary["warning_kinds"].append(kind)
    return warn


# A timed section shorter than this is at the mercy of a scheduler tick, a page fault or
# a timer's resolution (pyperf's and hyperfine's minimums are of this order).
MIN_TIMED_NS = 50_000_000


def _short_run_warnings(wl, ok: list[dict]) -> list[str]:
    """The point's timed section (the spec's "timed" raw fact), when it is too short."""
    if not wl or not wl.timed:
        return []
    times = [t for m in ok if isinstance(t := ((m.get("worker") or {}).get("measured") or {}).get(wl.timed),
                                         (int, float))]
    if not times or statistics.median(times) >= MIN_TIMED_NS:
        return []
    return [f"{wl.timed}: the timed section lasted {statistics.median(times) / 1e6:.3g} ms (median), under "
            f"{MIN_TIMED_NS / 1e6:g} ms: too short to be stable; give the point more work"]


def _beside_builds_warnings(ok: list[dict]) -> list[str]:
    """The repetitions measured while target builds still ran (msgbench run's builds
    beside it, at idle priority while a worker runs: running/beside.py)."""
    beside = [w["beside_builds"] for m in ok if (w := m.get("worker") or {}).get("beside_builds")]
    if not beside:
        return []
    names = sorted({name for found in beside for name in found})
    return [f"{len(beside)} of {len(ok)} repetitions measured while builds ran ({', '.join(names)}), at idle "
            "priority: they still share caches and memory; rerun on the built targets to confirm"]


# Other work taking more than this share of the machine's CPU during a repetition makes
# its figures suspect: the measurement competed for the cores it was timing.
BUSY_MACHINE_SHARE = 0.2


def _competition_warnings(ok: list[dict]) -> list[str]:
    workers = [m.get("worker") or {} for m in ok]
    busy = [w for w in workers if (w.get("other_cpu_share") or 0) > BUSY_MACHINE_SHARE]
    if not busy:
        return []
    share = max(w["other_cpu_share"] for w in busy)
    text = (f"other work on the machine took up to {share:.0%} of its CPU during {len(busy)} of "
            f"{len(ok)} repetitions")
    # What it was (noise.py), in runs stored since it is recorded.
    found = noise.causes([w["other_work"] for w in busy if w.get("other_work")])
    if found:
        text += ": " + ", ".join(f"{label} {value:.0%}" for label, value in found[:4])
        unnamed = share - sum(value for _, value in found)
        if unnamed > BUSY_MACHINE_SHARE / 2:
            text += f", {unnamed:.0%} unnamed (processes that came and went)"
    # The measurement's own kernel work (its softirqs, kworkers) is no competitor.
    def competition(w: dict) -> float:
        work = w.get("other_work")
        return w["other_cpu_share"] - (work.get("kernel_threads", 0) + work.get("irq", 0)) if work else 1.0

    if all(competition(w) <= BUSY_MACHINE_SHARE for w in busy):
        return [text + " — mostly the measurement's own kernel work, not competition: the point stands"]
    # Half the repetitions or more: the median itself is a busy one.
    if 2 * len(busy) >= len(ok):
        return [text + " — do not trust this point; rerun on a quiet machine"]
    return [text + " — those repetitions competed for the cores they time; rerun on a quiet machine to confirm"]


def _threshold_warnings(wl: spec.Workload, computed: dict, params: dict) -> list[tuple[str, str]]:
    """(kind, text) for a metric whose spec says "warn_above" (a number: any repetition
    above it, e.g. pubsub's loss) or "warn_below" (an expression over the parameters,
    against the median: e.g. an open loop that fell behind its requested rate)."""
    found = []
    for name, definition in wl.metrics.items():
        if name not in computed:
            continue
        kind = definition.get("warn_kind", LOSS)
        limit = definition.get("warn_above")
        if limit is not None and computed[name].max > limit:
            found.append((kind, f"{name}: up to {computed[name].max:.3g} "
                                f"({definition.get('warning', 'above ' + str(limit))})"))
        below = definition.get("warn_below")
        if below is not None:
            # A run stored before a parameter existed has the spec's default for it.
            defaults = {n: d["default"] for n, d in wl.params.items() if "default" in d}
            floor = expr.evaluate(below, defaults | params)
            if computed[name].median < floor:
                found.append((kind, f"{name}: median {units.number(computed[name].median)}, under {below} = "
                                    f"{units.number(floor)} "
                                    f"({definition.get('warning', 'below ' + below)})"))
    return found


def run_document(store, run_ids: list[str]) -> dict:
    runs = []
    for run_id in run_ids:
        run = store.run(run_id)
        measurements = store.measurements(run_id)
        runs.append({
            "id": run["id"], "created_at": run["created_at"], "finished_at": run["finished_at"],
            "status": run["status"], "command": run["command"], "suite": run["suite"],
            "notes": run["notes"], "metadata": run["metadata"],
            "imported_from": run.get("imported_from"),
            "measurements": [_public(m) for m in measurements],
            "summary": summarize_run(measurements, (run["metadata"].get("precision") or {}).get("target")),
            "logs": store.logs(run_id),
        })
    return {"format": FORMAT_NAME, "version": FORMAT_VERSION, "runs": runs}


def _public(m: dict) -> dict:
    return {k: v for k, v in m.items() if k != "stderr_tail"} | {"stderr_tail": m.get("stderr_tail") or ""}


class DocumentError(ValueError):
    pass


def check_document(doc: object, source: str) -> list[dict]:
    """The runs of a results document, or an error naming the path of the first bad field.

    Checked against spec/results.schema.json before anything is stored, so a string
    where a number goes never reaches a reader (show, export, compare, report).
    """
    if not isinstance(doc, dict) or doc.get("format") != FORMAT_NAME:
        raise DocumentError(f"{source}: not a msgbench results document (no \"format\": \"{FORMAT_NAME}\")")
    if doc.get("version") != FORMAT_VERSION:
        raise DocumentError(f"{source}: results format version {doc.get('version')!r} is not {FORMAT_VERSION}")
    problem = spec.document_problem(doc, "results.schema.json")
    if problem:
        raise DocumentError(f"{source}: {problem}")
    runs = doc["runs"]
    for run in runs:
        for m in run["measurements"]:
            m.setdefault("warmup", False)
            m.setdefault("build", "")
            m.setdefault("variant_label", "idiomatic")
            m.setdefault("sweep", None)
            m.setdefault("x", None)
            m.setdefault("metrics", {})
            m.setdefault("verify", {})
    return runs
