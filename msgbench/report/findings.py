"""The report's opening: per scenario, who leads and by how much, verification, loss.

One row per scenario (and run, when the document holds several): its judging metric
(the plug-in's `primary` for the scenario, else the spec's), the series that is best
at most points, and at the largest x where two or more series have a number the
leader's margin over the runner-up as a ratio with a two-sided Mann-Whitney U test of
their repetitions — three repetitions against three can never reach p < 0.05, and
the row says "not significant" then rather than hiding the ratio. Verification counts
the summaries that are ok, failed and n/a; loss is the largest median of any metric
named loss* (pubsub's loss_ratio).
"""

import json
from dataclasses import dataclass

from msgbench import figures, model, stats, units, workloads
from msgbench.compare import ALPHA
from msgbench.points import canonical, target_label


@dataclass
class Finding:
    workload: str
    scenario: str
    metric: str
    better: str
    params: str = ""  # what sets this scenario apart from others of the same name (m=10)
    run: str = ""  # the run, when the document holds several (targets compete within a run)
    leader: str = ""
    leads_at: str = ""  # "4 of 5 points"
    at: str = ""  # where the margin is measured: "senders = 16"
    ahead: str = ""  # the best series there (usually the leader)
    runner_up: str = ""
    ratio: float | None = None  # >= 1: how many times better the leader is
    p_value: float | None = None
    samples: tuple[int, int] = (0, 0)
    ok: int = 0
    failed: int = 0
    unsupported: int = 0
    loss: float | None = None
    two_groups: str = ""  # a compared series whose repetitions fall in two groups: no verdict

    @property
    def significant(self) -> bool:
        return self.p_value is not None and self.p_value < ALPHA and not self.two_groups

    def margin_text(self) -> str:
        """1.23× erlang/default at senders = 16 (the leader there, when another series)."""
        if self.ratio is None:
            return "one series only" if self.leader else "no numbers"
        ahead = "" if self.ahead == self.leader else f"{self.ahead} "
        return f"{ahead}{self.ratio:.2f}× {self.runner_up} at {self.at}"

    def significance_text(self) -> str:
        if self.ratio is None:
            return ""
        if self.p_value is None:
            return "no repetitions in the document to test"
        if self.two_groups:
            return f"inconclusive: its repetitions fall in two groups ({self.two_groups})"
        verdict = "significant" if self.significant else "not significant"
        return f"p = {self.p_value:.2g} ({self.samples[0]} vs {self.samples[1]} repetitions): {verdict}"

    def verification_text(self) -> str:
        parts = [f"{self.ok} of {self.ok + self.failed + self.unsupported} points ok"]
        if self.failed:
            parts.append(f"{self.failed} failed")
        if self.unsupported:
            parts.append(f"{self.unsupported} n/a")
        return ", ".join(parts)


def findings(doc: dict) -> list[Finding]:
    values = _repetitions(doc)
    out = []
    for data in model.collect(doc, workloads.order):
        plugin = workloads.plugin(data.workload)
        groups = model.scenario_groups(data.entries)
        extras = model.distinguishing([json.loads(key[2]) for key in groups])
        for (scenario, _sweep, _fixed), entries, extra in zip(groups, groups.values(), extras,
                                                              strict=True):
            metric = plugin.primary(entries[0].params) or data.primary_metric
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
    losses = [s["median"] for e in entries if e.status == "ok"
              for name, s in (e.summary.get("metrics") or {}).items()
              if name.startswith("loss") and s.get("median") is not None]
    f.loss = max(losses) if losses else None
    if better not in ("higher", "lower"):
        return f
    sign = 1 if better == "higher" else -1
    by_x = model.group_by([e for e in entries if e.status == "ok" and _median(e, metric) is not None],
                          lambda e: e.summary.get("x"))
    leaders = []
    for members in by_x.values():
        ranked = sorted(members, key=lambda e: -sign * _median(e, metric))
        leaders.append(_who(ranked[0]))
    if not leaders:
        return f
    f.leader = max(dict.fromkeys(leaders), key=leaders.count)
    f.leads_at = f"{leaders.count(f.leader)} of {len(leaders)} point{'s' if len(leaders) > 1 else ''}"
    contested = [x for x, members in by_x.items() if len(members) > 1]
    if not contested:
        return f
    x = max(contested, key=model.sort_key)
    best, second = sorted(by_x[x], key=lambda e: -sign * _median(e, metric))[:2]
    a, b = _median(best, metric), _median(second, metric)
    if a > 0 and b > 0:
        f.ratio = a / b if better == "higher" else b / a
    f.ahead, f.runner_up = _who(best), _who(second)
    sweep = best.summary.get("sweep")
    f.at = f"{sweep} = {figures.format_value(x) if isinstance(x, (int, float)) else x}" if sweep else "its one point"
    sample_a, sample_b = values.get(_key(best), {}).get(metric, []), values.get(_key(second), {}).get(metric, [])
    f.samples = (len(sample_a), len(sample_b))
    if sample_a and sample_b:
        f.p_value = stats.mann_whitney(sample_a, sample_b).p_value
    f.two_groups = "; ".join(f"{who}: {stats.groups_text(groups, units.number)}"
                             for who, sample in ((f.ahead, sample_a), (f.runner_up, sample_b))
                             if (groups := stats.two_groups(sample)))
    return f


def _who(entry: model.Entry) -> str:
    return target_label(entry.summary)


def _median(entry: model.Entry, metric: str) -> float | None:
    stats_ = (entry.summary.get("metrics") or {}).get(metric) or {}
    return stats_.get("median")


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
