"""What the terminal shows of a run: one table per headline, what the marks in them
mean, and the warnings grouped into a short summary, most serious first.

A run of the quick suite carries dozens of warnings, most of them a noisy point on a
busy machine; printed one per line they push the table off the screen and bury the one
that matters (a system that lost most of its messages). So the summary says each loss,
failure and missed rate in a line per target and scenario, counts the noisy points in
one line, and names the command that lists every warning (`show RUN --warnings`).
"""

from collections import defaultdict

from msgbench.core import spec
from msgbench.data import compare, results, stats
from msgbench.data.points import describe, target_label
from msgbench.views import tables, workloads
from msgbench.views.workloads.plugin import Headline, primary_headline

MAX_WARNING_LINES = 10
_SERIOUS = {results.FAILED: "failed", results.LOSS: "loss", results.RATE: "missed rate"}


def headline_of(s: dict) -> Headline:
    if s["workload"] not in spec.workloads():  # an imported run of a workload this checkout lacks
        return Headline(s["workload"], ())
    plugin = workloads.plugin(s["workload"])
    return plugin.headline(s["params"]) or primary_headline(s["workload"], s["params"])


def status_text(s: dict) -> str:
    if s["status"] == "ok":
        return "ok*" if s["warnings"] else "ok"
    return "n/a" if s["status"] == "unsupported" else s["status"].upper()


def _style(s: dict) -> str:
    return {"ok": "", "ok*": "warn", "n/a": "dim"}.get(status_text(s), "bad")


def point_text(s: dict) -> str:
    return f"{s['sweep']}={s['x']}" if s.get("sweep") else ""


def summary_tables(summary: list[dict], wide: bool = False, scenarios: bool = False) -> list[tables.Table]:
    """One table per headline (socket echo's round trip, flow's MB/s, ...), in the
    workloads' order; wide adds each point's spread and parameters; scenarios keeps the
    scenario column even where a table holds one (Markdown, whose rows get pasted apart)."""
    # Against the reference tools in the figure the table leads with (echo: round trip).
    references = tables.reference_metrics(summary, lambda s: next(
        (c.metric for c in headline_of(s).columns), spec.workload(s["workload"]).primary_metric))
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for s in summary:
        groups[(s["workload"], headline_of(s).title)].append(s)
    ordered = workloads.order({w for w, _ in groups})
    out = []
    for key in sorted(groups, key=lambda k: ordered.index(k[0])):
        out.append(_table(groups[key], references, wide, scenarios))
    return out


def _table(points: list[dict], references: dict, wide: bool, always_scenario: bool) -> tables.Table:
    headline = headline_of(points[0])
    scenarios = list(dict.fromkeys(s["scenario"] for s in points))
    # By scenario, then x: a point stored out of order (a suite's n/a rows come first) sits in its place.
    points = sorted(points, key=lambda s: (scenarios.index(s["scenario"]), _x_key(s.get("x"))))
    with_scenario = len(scenarios) > 1 or always_scenario
    with_point = any(point_text(s) for s in points)
    # One swept parameter in the whole table: its name heads the column, its values fill it.
    sweeps = {s.get("sweep") for s in points if s.get("sweep")}
    sweep = sweeps.pop() if len(sweeps) == 1 and all(s.get("sweep") for s in points) else None
    with_reference = any(tables.reference_for(references, s) for s in points)
    first = headline.columns[0].metric if headline.columns else None
    headers = (["scenario"] if with_scenario else []) + ([sweep or "point"] if with_point else [])
    headers += ["target/variant", "status", *(c.header for c in headline.columns), "cv", "n"]
    if wide:
        headers += [f"min {headline.columns[0].header}", f"max {headline.columns[0].header}", "parameters"] \
            if headline.columns else ["parameters"]
    if with_reference:
        headers.append("x reference")
    rows = []
    for s in points:
        point = str(s["x"]) if sweep else point_text(s)
        row = ([s["scenario"]] if with_scenario else []) + ([point] if with_point else [])
        row += [target_label(s), status_text(s)]
        lead = s["metrics"].get(first) if s["status"] == "ok" else None
        for column in headline.columns:
            stats = s["metrics"].get(column.metric) if s["status"] == "ok" else None
            cell = column.show(results.point_value(stats)) if stats else "-"
            share = s["params"].get(column.share_of) if column.share_of else None
            if stats and isinstance(share, (int, float)) and share > 0:
                cell += f" ({results.point_value(stats) / share:.0%})"
            row.append(cell)
        row.append(f"{lead['cv']:.1%}" if lead and lead["n"] > 1 else "")  # one value has no spread
        row.append(str(lead["n"]) if lead else f"{s['ok']}/{s['total']}")
        if wide:
            if headline.columns:
                show = headline.columns[0].show
                row += [show(lead["min"]) if lead else "", show(lead["max"]) if lead else ""]
            ran = "".join(f" (ran {k}={v:,})" for k, v in (s.get("calibrated") or {}).items())
            row.append(describe(s["params"], s.get("sweep")) + ran)
        if with_reference:
            row.append(_against_reference(s, lead, tables.reference_for(references, s), first))
        rows.append(row)
    title = headline.title + ("" if len(scenarios) > 1 else _scenario_note(scenarios[0], headline.title))
    # A narrow terminal leaves out the spread first, then the figures after the first.
    optional = () if wide else ("n", "cv", *(c.header for c in headline.columns[1:][::-1]))
    return tables.Table(headers, rows, title=title, styles=[_style(s) for s in points],
                        wrap={"scenario", "parameters"}, optional=optional)


# A ratio is only as good as the repetitions behind it: on a shared machine one run of a
# tool and a target doing the same system calls can read 0.95x or 1.05x by chance. The
# test is `msgbench compare`'s (Mann-Whitney U, two-sided, at its ALPHA).
WITHIN_NOISE = "≈"


def _against_reference(s: dict, lead: dict | None, reference: dict | None, metric: str | None) -> str:
    """How many times the tool's performance a target reaches: above 1.00x is better than the
    tool whichever way the figure reads (a round trip, lower is better: the tool's over the
    target's). A reference tool's own row is the yardstick, not compared. WITHIN_NOISE
    follows a ratio whose repetitions cannot be told from the tool's."""
    if not (reference and reference["median"] and lead and lead["median"]) or s.get("variant_label") == "reference":
        return ""
    lower_is_better = metric is not None and spec.workload(s["workload"]).metric_better(metric) == "lower"
    ratio = reference["median"] / lead["median"] if lower_is_better else lead["median"] / reference["median"]
    return f"{ratio:.2f}x" + (f" {WITHIN_NOISE}" if _within_noise(lead, reference) else "")


def _within_noise(lead: dict, reference: dict) -> bool:
    """Whether the two points' repetitions do not differ significantly; False when either
    summary lacks its values (an import, or a document written before they were kept)."""
    if not (lead.get("values") and reference.get("values")):
        return False
    return stats.mann_whitney(lead["values"], reference["values"]).p_value >= compare.ALPHA


def _any_ratio_within_noise(summary: list[dict]) -> bool:
    """Whether some table of the summary marks an "x reference" ratio WITHIN_NOISE: the
    tables' own cells, so that the legend cannot say what they do not show."""
    for table in summary_tables(summary):
        if "x reference" in table.headers:
            column = table.headers.index("x reference")
            if any(row[column].endswith(WITHIN_NOISE) for row in table.rows):
                return True
    return False


def _x_key(x) -> tuple:
    return (0, x, "") if isinstance(x, (int, float)) and not isinstance(x, bool) else (1, 0, str(x))


def _scenario_note(scenario: str, title: str) -> str:
    """The scenario's name, when the title does not already start with it."""
    return "" if title.startswith(scenario) else f" [{scenario}]"


def legend(summary: list[dict]) -> str:
    """What the status marks present in the tables mean."""
    shown = {status_text(s) for s in summary}
    parts = []
    if "ok*" in shown:
        parts.append("ok* = ok, with a warning (below)")
    if "n/a" in shown:
        parts.append("n/a = the target does not implement this point or cannot hold it (the notes say why)")
    pairings = tables.reference_pairings(summary)
    variants = {(s["target"], f"{s['target']}/{s['variant']}")
                for s in summary if s.get("variant_label") != "reference"}
    measured = {name for pair in variants for name in pair}
    # The tool for everyone is named only where some measured variant has no tool of its own.
    unpaired = any(target not in pairings and variant not in pairings for target, variant in variants)
    paired = {target: tools for target, tools in pairings.items()
              if (target is None and unpaired) or target in measured}
    everyone = "every other target" if len(paired) > 1 else "every target"
    pairs = [f"{target or everyone} against {' and '.join(tools)}"
             for target, tools in sorted(paired.items(), key=lambda item: item[0] or "")]
    if pairs:  # which tool each ratio is against (docs/fair-clients.md: the fair pairings)
        parts.append("x reference = the tool's performance reached, above 1.00x better than it; "
                     + "; ".join(pairs))
    if _any_ratio_within_noise(summary):
        parts.append(f"{WITHIN_NOISE} = within the noise: the repetitions do not tell it from the tool's "
                     f"(Mann-Whitney U, p ≥ {compare.ALPHA}; with fewer than "
                     f"{stats.fewest_repetitions_to_differ(compare.ALPHA)} a side it always reads {WITHIN_NOISE})")
    failed = sorted(shown - {"ok", "ok*", "n/a"})
    if failed:
        parts.append(f"{', '.join(failed)} = no repetition succeeded (below)")
    return "; ".join(parts)


def _flags(s: dict) -> list[tuple[str, str]]:
    """(kind, text) of a point: its warnings, and its error when nothing succeeded."""
    warnings = s.get("warnings") or []  # none at all: a summary of the machine's limits
    found = list(zip(s.get("warning_kinds") or [], warnings, strict=False))
    found += [("noise:cv", w) for w in warnings[len(found):]]  # kinds absent: an older summary
    if s["status"] != "ok":  # its status says it, rather than "n of n repetitions did not succeed" besides
        found = [f for f in found if f[0] != results.FAILED]
    if s["status"] not in ("ok", "unsupported"):
        error = str(s.get("error") or "no repetition succeeded").splitlines()[0]
        found.insert(0, (results.FAILED, f"{s['status']}: {error}"))
    return found


def method_lines(run: dict) -> list[str]:
    """How the run was measured, where its figures depend on it: where its processes ran
    (msgbench/workers/cpus.py) and how its work was calibrated (msgbench/running/calibrate.py)."""
    meta, lines = run.get("metadata") or {}, []
    placed = meta.get("cpu_placement")
    if placed:
        lines.append(f"cpus: {placed.get('description') or placed.get('policy')}")
    calibrated = [s for s in run["summary"] if s.get("calibrated")]
    if meta.get("min_time_s"):
        raised = ""
        if calibrated:
            factors = sorted({round(v / s["params"][k]) for s in calibrated for k, v in s["calibrated"].items()
                              if isinstance(s["params"].get(k), (int, float)) and s["params"][k]})
            span = f"x{factors[0]:,}" + (f" to x{factors[-1]:,}" if len(factors) > 1 else "")
            raised = f"; {len(calibrated)} of {len(run['summary'])} points given more work ({span}; --wide shows it)"
        lines.append(f"work: each timed section calibrated to at least {meta['min_time_s']:g} s{raised}")
    return lines


def warning_summary(run: dict, limit: int = MAX_WARNING_LINES) -> list[str]:
    """At most `limit` lines: losses, failures and missed rates per target and scenario,
    then the noisy points counted in one line, and the command that lists them all."""
    serious: dict[tuple, list[tuple[dict, str]]] = defaultdict(list)
    noisy: dict[str, set] = defaultdict(set)
    points_noisy, total = set(), 0
    for index, s in enumerate(run["summary"]):
        for kind, text in _flags(s):
            total += 1
            if kind in _SERIOUS:
                serious[(list(_SERIOUS).index(kind), kind, target_label(s), s["scenario"])].append((s, text))
            else:
                noisy[kind].add(index)
                points_noisy.add(index)
    if not total:
        return []
    lines = [f"warnings ({total}; every one: msgbench show {run['id']} --warnings):"]
    room = limit - 1 - (1 if points_noisy else 0)
    keys = sorted(serious)
    for key in keys[:room if len(keys) <= room else room - 1]:
        lines.append("  " + _serious_line(key, serious[key]))
    if len(keys) > room:
        rest = len(keys) - (room - 1)
        lines.append(f"  ... and {rest} more lost, failed or missed-rate groups (show --warnings)")
    if points_noisy:
        lines.append(f"  {noise_line(run['summary'])}; their medians are less certain")
    return lines


def noise_line(summary: list[dict]) -> str:
    """How many points were noisy and why, by warning kind (any kind a summary carries, its
    results.NOISE_KINDS name where it has one): "noisy: 12 of 40 points (9 machine busy,
    3 outliers)"; "" when none was."""
    noisy: dict[str, set] = defaultdict(set)
    for index, s in enumerate(summary):
        for kind, _ in _flags(s):
            if kind not in _SERIOUS:
                noisy[kind].add(index)
    points = set().union(*noisy.values()) if noisy else set()
    if not points:
        return ""
    kinds = ", ".join(f"{len(noisy[k])} {results.NOISE_KINDS.get(k, k.removeprefix('noise:'))}"
                      for k in sorted(noisy, key=lambda k: (-len(noisy[k]), k)))
    return f"noisy: {len(points)} of {len(summary)} points ({kinds})"


def _serious_line(key: tuple, found: list[tuple[dict, str]]) -> str:
    _, kind, label, scenario = key
    s, text = _worst(kind, found)
    where = point_text(s)
    if len(found) > 1:
        xs = [str(p["x"]) for p, _ in found]
        where = f"{s['sweep']}={', '.join(dict.fromkeys(xs))}" if s.get("sweep") else f"{len(found)} points"
        if len({t for _, t in found}) > 1 and point_text(s):
            text += f" ({'the first' if kind == results.FAILED else 'the worst'}, at {point_text(s)})"
    return f"{_SERIOUS[kind]}: {label} {scenario}{' at ' + where if where else ''}: {text}"


def _worst(kind: str, found: list[tuple[dict, str]]) -> tuple[dict, str]:
    """The point to quote for a group: the most lost, the furthest behind its rate."""
    def metric(entry):
        s, text = entry
        return s["metrics"].get(text.partition(":")[0]) or {}
    if kind == results.LOSS:
        return max(found, key=lambda e: metric(e).get("max", 0))
    if kind == results.RATE:
        return min(found, key=lambda e: metric(e).get("median", 0) / max(e[0]["params"].get("rate") or 1, 1))
    return found[0]


def all_warnings(run: dict) -> list[str]:
    """Every warning and failure of the run, one per line, most serious first."""
    order = [*_SERIOUS, *results.NOISE_KINDS]
    found = []
    for s in run["summary"]:
        where = f" {point_text(s)}" if point_text(s) else ""
        for kind, text in _flags(s):
            rank = order.index(kind) if kind in order else len(order)
            found.append((rank, f"{_SERIOUS.get(kind, 'noisy')}: {target_label(s)} {s['scenario']}{where}: {text}"))
    return [line for _, line in sorted(found, key=lambda f: f[0])]


def answers(doc: dict) -> list[str]:
    """The short answer per scenario and judging metric, from the Findings' judgement:
    what a run, `show` and the report's opening all say."""
    from msgbench.views.report import findings  # the report package: loaded only for a document's answers

    lines = []
    for f in findings.findings(doc):
        if not f.judgements:
            continue
        where = f" ({f.params})" if f.params else ""
        at = f" at {f.at}" if f.at and f.at != "its one point" else ""
        name = f.scenario if f.scenario.startswith(f.workload) else f"{f.workload} {f.scenario}"
        lines.append(f"{name}{where}, {f.metric}{at}: {f.answer()}")
        if f.own_tool:
            lines.append(f"  against its own tool: {'; '.join(f.own_tool)}")
    return lines
