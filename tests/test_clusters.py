"""Repetitions in two groups are named, not averaged, and no verdict rests on them."""

import copy

from msgbench.data import results, stats
from msgbench.data.compare import compare_runs, regressions
from msgbench.views.report.findings import findings
from tests.report.report_fixtures import make_doc

TWO_GROUPS = [14.0e3, 30.1e3, 14.2e3, 13.9e3, 30.3e3]  # unbatched redis's two states


def test_two_clear_groups_are_found_with_their_medians_and_counts():
    groups = stats.two_groups(TWO_GROUPS)
    assert groups.as_dict() == {"groups": [{"median": 14.0e3, "n": 3}, {"median": 30.2e3, "n": 2}]}
    assert stats.groups_text(groups, lambda v: f"{v / 1e3:.1f}k") == "two groups: 14.0k (3 reps) and 30.2k (2 reps)"


def test_a_noisy_but_unimodal_point_is_one_group():
    assert stats.two_groups([10, 11.5, 9, 12, 8.5, 10.8]) is None  # cv 13%: noisy, but no gap stands out


def test_a_single_outlier_is_not_a_group():
    assert stats.two_groups([10, 10.1, 9.9, 10.05, 20]) is None
    assert stats.two_groups([10, 10.1, 20, 20.1]) is not None  # two a side: groups


def test_a_gap_small_against_the_median_is_not_two_groups():
    # Tight groups 4% apart: within what no verdict turns on.
    assert stats.two_groups([100, 100.1, 100.2, 104, 104.1]) is None


def _measurements(values):
    return [{"scenario": "pubsub", "workload": "pubsub", "target": "redis", "build": "", "variant": "default",
             "variant_label": "idiomatic", "params": {"payload_bytes": 1024}, "sweep": None, "x": None,
             "repetition": i + 1, "warmup": False, "status": "ok", "error": None,
             "metrics": {"msgs_per_s": v}, "verify": {}, "worker": None}
            for i, v in enumerate(values)]


def test_the_summary_names_both_groups_in_a_warning_of_its_own():
    (summary,) = results.summarize_run(_measurements(TWO_GROUPS))
    judged = summary["two_groups"]["metric"]
    assert summary["two_groups"]["groups"] == [{"median": 14.0e3, "n": 3}, {"median": 30.2e3, "n": 2}]
    text = summary["warnings"][summary["warning_kinds"].index("noise:clusters")]
    assert text.startswith(f"{judged}: two groups: 14k (3 reps) and 30.2k (2 reps)"), text
    assert "noise:clusters" in results.NOISE_KINDS
    (quiet,) = results.summarize_run(_measurements([14.0e3, 14.1e3, 13.9e3, 14.2e3, 14.05e3]))
    assert "two_groups" not in quiet and "noise:clusters" not in quiet["warning_kinds"]


def test_compare_calls_a_point_in_two_groups_inconclusive_not_a_ratio():
    # Every B above every A (p = 0.008), but B is two states: 30.2k or 20.1k.
    a = {"measurements": _measurements([14.0e3, 14.1e3, 13.9e3, 14.2e3, 14.05e3])}
    b = {"measurements": _measurements([30.1e3, 30.3e3, 30.2e3, 20.0e3, 20.2e3])}
    (row,) = compare_runs(a, b, metric="msgs_per_s")
    assert row["verdict"] == "inconclusive: its repetitions fall in two groups (B: two groups: 30.2k (3 reps) " \
                             "and 20.1k (2 reps))"
    assert row["significant"] is False and row["p_value"] < 0.05
    assert regressions([row], 0.05) == []
    (plain,) = compare_runs(a, {"measurements": _measurements([30.1e3, 30.3e3, 30.2e3, 30.0e3, 30.4e3])},
                            metric="msgs_per_s")
    assert plain["verdict"].startswith("B is") and plain["significant"]


def test_the_reports_findings_say_inconclusive_for_a_leader_in_two_groups():
    doc = copy.deepcopy(make_doc(1))
    run = doc["runs"][0]
    at_16 = [m for m in run["measurements"] if m["scenario"] == "fanin-message-1" and not m["warmup"]
             and m["params"]["senders"] == 16 and m["target"] in ("go", "erlang")]
    metric = "receive_throughput_per_s"
    for target, values in (("go", [9e7, 9.1e7, 9.05e7, 4.0e7, 4.1e7]), ("erlang", [3e7, 3.01e7, 3.02e7, 2.99e7,
                                                                                   3.03e7])):
        template = next(m for m in at_16 if m["target"] == target)
        run["measurements"] = [m for m in run["measurements"] if m not in at_16 or m["target"] != target]
        run["measurements"] += [template | {"repetition": i + 1, "metrics": template["metrics"] | {metric: v}}
                                for i, v in enumerate(values)]
    run["summary"] = results.summarize_run(run["measurements"])
    finding = next(f for f in findings(doc) if f.scenario == "fanin-message-1")
    (judged,) = finding.judgements
    assert finding.best == "go/default" and judged.p_value < 0.05  # a U test alone would name a leader
    assert not finding.significant and not finding.leader and judged.unstable
    assert finding.answer() == (f"{judged.pair}: inconclusive: its repetitions fall in two groups (go/default: "
                                "two groups: 90.5M (3 reps) and 40.5M (2 reps))")
    assert judged.pair.startswith("go/default vs ")
