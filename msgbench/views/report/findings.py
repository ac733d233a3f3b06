"""The report's opening, and the short answers that end `run` and `show`: per scenario and
the metric users compare there, who leads and by how much, verification, loss.

One row per scenario and judging metric (the plug-in's `judged_by` for the scenario:
chat realistic by its latency p99 and achieved send rate, not the offered load every
target meets; else its `primary`, else the spec's), per run when the document holds
several. The series compared are the systems, never a reference tool: each system's
own tool is a ratio of its own ("x own tool"). At the largest x where two or more
systems have a number, the best and the runner-up are judged by verdict.judge: a leader
is named only where the Mann-Whitney U test finds them different; otherwise "no
significant difference" or "inconclusive: ..." (three repetitions against three can
never reach p < 0.05). A run of several builds is judged each build against the first,
per target. Verification counts the summaries that are ok, failed and n/a; loss is the
largest median of any metric named loss* (pubsub's loss_ratio).
"""

import json
from dataclasses import dataclass, field

from msgbench.data import model, results, verdict
from msgbench.data.points import canonical, target_label
from msgbench.views import figures, workloads

ONE_POINT = "its one point"  # a scenario that sweeps nothing: no "at ..." to say


@dataclass
class Finding:
    workload: str
    scenario: str
    metric: str
    better: str
    params: str = ""  # what sets this scenario apart from others of the same name (m=10)
    run: str = ""  # the run, when the document holds several (targets compete within a run)
    best: str = ""  # the series best at most points (named a leader only when significant)
    leads_at: str = ""  # "4 of 5 points"
    at: str = ""  # where the margin is measured: "senders = 16"
    judgements: list[verdict.Judgement] = field(default_factory=list)  # best vs runner-up, or each build
    own_tool: list[str] = field(default_factory=list)  # "redis 0.93x reference/redis_benchmark_sub"
    ok: int = 0
    failed: int = 0
    unsupported: int = 0
    loss: float | None = None
    loss_by: str = ""  # the series that lost the most, when any lost

    def loss_text(self) -> str:
        """loss_ratio is a share: 81.2% (mqtt/qos0), not 0.812 with no owner."""
        if self.loss is None:
            return "—"
        return f"{self.loss:.1%}" + (f" ({self.loss_by})" if self.loss_by else "")

    @property
    def significant(self) -> bool:
        return any(j.significant for j in self.judgements)

    @property
    def leader(self) -> str:
        """The best series, when it is significantly ahead of the runner-up (not for builds)."""
        return self.best if len(self.judgements) == 1 and self.judgements[0].leader == self.best else ""

    def answer(self) -> str:
        """The short human answer: "rust ran 1.25 ± 0.30 times faster than go", ...."""
        if not self.judgements:
            return "one series only" if self.best else "no numbers"
        return "; ".join(j.named_text for j in self.judgements)  # each says which pair it judged

    def margin_text(self) -> str:
        """The answer column: who is ahead by how much, or why none is named — the claim
        alone; the test that backs it is the significance column's (issue 29: each
        column says one thing)."""
        if not self.judgements:
            return self.answer()
        claims = "; ".join(j.answer for j in self.judgements)
        return claims + (f" at {self.at}" if self.at and self.at != ONE_POINT else "")

    def significance_text(self) -> str:
        """The significance column: the test alone, per judgement — p and the repetitions
        it compared, or why there is no p."""
        return "; ".join(_test_text(j) for j in self.judgements)

    def verification_text(self) -> str:
        parts = [f"{self.ok} of {self.ok + self.failed + self.unsupported} points ok"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.unsupported:
            parts.append(f"{self.unsupported} n/a")
        return ", ".join(parts)


def _test_text(j: verdict.Judgement) -> str:
    sides = f"{j.samples[0]} vs {j.samples[1]} repetitions"
    if j.p_value is not None:
        return f"p = {j.p_value:.2g} ({sides}): {'significant' if j.significant else 'not significant'}"
    if not any(j.samples):
        return "no test: no repetitions to compare"
    return f"no test: {sides}"


def findings(doc: dict) -> list[Finding]:
    values = _repetitions(doc)
    out = []
    for data in model.collect(doc, workloads.order):
        plugin = workloads.plugin(data.workload)
        groups = model.scenario_groups(data.entries)
        extras = model.distinguishing([json.loads(key[2]) for key in groups])
        for (scenario, _sweep, _fixed), entries, extra in zip(groups, groups.values(), extras,
                                                              strict=True):
            reported = set(model.metric_names(entries))
            judged = [m for m in plugin.judged_by(entries[0].params) if m in reported]
            for metric in judged or [data.judged_metric(entries[0].params)]:
                if metric is None:
                    continue
                # Targets compete within a run; comparing runs is `msgbench compare`'s business.
                for run_entries in model.group_by(entries, lambda e: e.run.index).values():
                    finding = _finding(data, scenario, run_entries, metric, values)
                    finding.params = model.describe_params(extra)
                    finding.run = run_entries[0].run.label if data.multi_run else ""
                    out.append(finding)
    return out


def _finding(data: model.WorkloadData, scenario: str, entries: list[model.Entry], metric: str,
             values: dict) -> Finding:
    better = data.better(metric)
    f = Finding(data.workload, scenario, metric, better)
    for e in entries:
        if e.status == "ok":
            f.ok += 1
        elif e.status == "unsupported":
            f.unsupported += 1
        else:
            f.failed += 1
    losses = [(s["median"], _who(e)) for e in entries if e.status == "ok"
              for name, s in (e.summary.get("metrics") or {}).items()
              if name.startswith("loss") and s.get("median") is not None]
    f.loss = max(losses)[0] if losses else None
    f.loss_by = max(losses)[1] if losses and max(losses)[0] > 0 else ""
    if better not in ("higher", "lower"):
        return f
    measured = [e for e in entries if e.status == "ok" and _median(e, metric) is not None]
    systems = [e for e in measured if not _is_reference(e)]
    if len({e.summary.get("build") or "" for e in systems}) > 1:
        return _builds(f, systems, metric, values)
    sign = 1 if better == "higher" else -1
    by_x = model.group_by(systems, lambda e: e.summary.get("x"))
    leaders = []
    for members in by_x.values():
        ranked = sorted(members, key=lambda e: -sign * _median(e, metric))
        leaders.append(_who(ranked[0]))
    if not leaders:
        return f
    f.best = max(dict.fromkeys(leaders), key=leaders.count)
    f.leads_at = f"{leaders.count(f.best)} of {len(leaders)} point{'s' if len(leaders) > 1 else ''}"
    contested = [x for x, members in by_x.items() if len(members) > 1]
    if not contested:
        return f
    x = max(contested, key=model.sort_key)
    best, second = sorted(by_x[x], key=lambda e: -sign * _median(e, metric))[:2]
    f.at = _at(best, x)
    f.judgements.append(_judge(best, second, metric, better, values))
    f.own_tool = _own_tools(by_x[x], [e for e in measured if _is_reference(e) and e.summary.get("x") == x],
                            metric, better)
    return f


def _judge(a: model.Entry, b: model.Entry, metric: str, better: str, values: dict) -> verdict.Judgement:
    """verdict.judge of two series' repetitions at a point; from their medians alone, when
    the document keeps no repetitions (an import), which no test can judge."""
    sample_a, sample_b = values.get(_key(a), {}).get(metric, []), values.get(_key(b), {}).get(metric, [])
    if sample_a and sample_b:
        return verdict.judge(_who(a), sample_a, _who(b), sample_b, better, metric)
    return verdict.Judgement(verdict.INCONCLUSIVE, "inconclusive: no repetitions in the document to test")


def _builds(f: Finding, systems: list[model.Entry], metric: str, values: dict) -> Finding:
    """Each build against the first, per target and variant, at the largest x both measured."""
    first = systems[0].summary.get("build") or ""
    f.best = first
    for _, series in model.group_by(systems, lambda e: (e.summary["target"], e.summary["variant"])).items():
        base = {e.summary.get("x"): e for e in series if (e.summary.get("build") or "") == first}
        for build, others in model.group_by(series, lambda e: e.summary.get("build") or "").items():
            if build == first:
                continue
            common = [e.summary.get("x") for e in others if e.summary.get("x") in base]
            if not common:
                continue
            x = max(common, key=model.sort_key)
            other = next(e for e in others if e.summary.get("x") == x)
            f.at = _at(other, x)
            f.judgements.append(_judge(other, base[x], metric, f.better, values))
    return f


def _own_tools(systems: list[model.Entry], tools: list[model.Entry], metric: str, better: str) -> list[str]:
    """Each system against the reference tool that measures it (tables.reference_for's rule:
    its variant's, else its target's, else everyone's), at one point: above 1.00x better."""
    out = []
    for e in systems:
        s = e.summary
        for measured in (f"{s['target']}/{s['variant']}", s["target"], None):
            tool = next((t for t in reversed(tools) if measured in (t.summary.get("reference_for") or [None])), None)
            if tool:
                mine, theirs = _median(e, metric), _median(tool, metric)
                if mine and theirs:
                    ratio = mine / theirs if better == "higher" else theirs / mine
                    out.append(f"{_who(e)} {ratio:.2f}x {_who(tool)}")
                break
    return out


def _at(entry: model.Entry, x) -> str:
    sweep = entry.summary.get("sweep")
    return f"{sweep} = {figures.format_value(x) if isinstance(x, (int, float)) else x}" if sweep else ONE_POINT


def _is_reference(entry: model.Entry) -> bool:
    return entry.summary.get("variant_label") == "reference"


def _who(entry: model.Entry) -> str:
    return target_label(entry.summary)


def _median(entry: model.Entry, metric: str) -> float | None:
    """The point's figure: the median of its repetitions, or for a latency percentile the
    percentile of all their messages (results.point_value), as the tables show it."""
    stats_ = (entry.summary.get("metrics") or {}).get(metric) or {}
    return results.point_value(stats_) if stats_.get("median") is not None else None


def _key(entry: model.Entry) -> tuple:
    s = entry.summary
    return (entry.run.index, s["scenario"], s["target"], s.get("build") or "", s["variant"],
            canonical(s.get("params") or {}))


def _repetitions(doc: dict) -> dict:
    """Every ok repetition's metrics, by run and point: the samples the U test compares."""
    out: dict = {}
    for index, run in enumerate(model.runs_of(doc)):
        for m in run.get("measurements") or []:
            if m.get("warmup") or m.get("status") != "ok":
                continue
            key = (index, m["scenario"], m["target"], m.get("build") or "", m["variant"],
                   canonical(m.get("params") or {}))
            for name, value in (m.get("metrics") or {}).items():
                if isinstance(value, (int, float)):
                    out.setdefault(key, {}).setdefault(name, []).append(value)
    return out
