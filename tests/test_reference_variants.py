"""Which reference variants a run brings along: a reference for one target's variant
(reference_for = ["c/tuned"]) runs with that target only."""

from msgbench import runner, targets


def reference_variants(measured: set[str]) -> set[str]:
    return {v.name for v in runner._variants(targets.target("reference"), "socket", "default", measured)}


def test_a_reference_for_a_variant_runs_with_its_target_only():
    assert "sockperf_pinned" in reference_variants({"c"})
    assert "sockperf_pinned" not in reference_variants({"go"})
    assert {"iperf3", "sockperf"} <= reference_variants({"go"})
