"""Which reference variants a run brings along: a reference for one target's variant
(reference_for = ["c/tuned"]) runs when that variant is measured."""

from msgbench.running import runner
from msgbench.workers import targets


def reference_variants(measured: set[str]) -> set[str]:
    return {v.name for v in runner._variants(targets.target("reference"), "socket", "default", measured)}


def test_a_reference_for_a_variant_runs_with_that_variant_only():
    assert "sockperf_pinned" in reference_variants({"c", "c/tuned"})
    assert "sockperf_pinned" not in reference_variants({"c", "c/default"})
    assert "sockperf_pinned" not in reference_variants({"go", "go/default"})
    assert {"iperf3", "sockperf"} <= reference_variants({"go", "go/default"})


def test_a_run_measures_its_targets_and_their_chosen_variants():
    c = targets.target("c")
    assert runner._measured([c], "socket", "default") == {"c", "c/default"}
    assert runner._measured([c, targets.target("reference")], "socket", "all") == {"c", "c/default", "c/tuned"}
