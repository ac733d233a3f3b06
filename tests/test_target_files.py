"""Every target folder follows docs/targets.md: a valid target.toml and a Makefile contract."""

import json
import re
import subprocess
import tomllib

import jsonschema
import pytest

from msgbench.core import spec
from msgbench.core.paths import REPO_ROOT, SPEC_DIR
from msgbench.running import workloads as workload_runs
from msgbench.workers import catalogue, targets

TARGET_FILES = sorted((REPO_ROOT / "targets").glob("*/target.toml"))
SCHEMA = json.loads((SPEC_DIR / "target.schema.json").read_text())


@pytest.mark.parametrize("path", TARGET_FILES, ids=lambda p: p.parent.name)
def test_target_toml_matches_schema_and_spec(path):
    raw = tomllib.loads(path.read_text())
    jsonschema.validate(raw, SCHEMA)
    assert raw["name"] == path.parent.name
    assert raw.get("default_variant", next(iter(raw["variants"]))) in raw["variants"]
    for name, variant in raw["variants"].items():
        for workload in variant["workloads"]:
            spec.workload(workload)  # raises for a workload the spec does not define
        assert variant.get("description"), f"variant {name} says nothing about itself"
    # the keys the registry does not read are a workload plug-in's, which checks them
    assert workload_runs.target_problems(targets.load_target(path.parent)) == []


@pytest.mark.parametrize("path", TARGET_FILES, ids=lambda p: p.parent.name)
def test_target_makefile_has_the_contract_targets(path):
    """build, test, lint and clean exist, in the Makefile or a fragment it includes
    (the Go pubsub targets share kits/pubsub/gotarget.mk); make's own database
    says, without running a recipe."""
    database = subprocess.run(["make", "-C", str(path.parent), "-pRrq", "-f", "Makefile", ":"],
                              capture_output=True, text=True, check=False).stdout
    for rule in ("build", "test", "lint", "clean"):
        assert re.search(rf"^{rule}:", database, re.MULTILINE), f"{path.parent.name}/Makefile has no {rule}:"


def test_the_four_runtimes_are_there():
    assert {p.parent.name for p in TARGET_FILES} >= {"erlang", "go", "rust", "c"}


def test_the_mqtt_go_tests_start_mosquitto_as_the_harness_does():
    """qos1's lossless claim rests on the harness's mosquitto config; the Go tests use a copy."""
    go = (REPO_ROOT / "targets/mqtt/internal/mqttsys/system_test.go").read_text()
    copy = re.search(r"const mosquittoConf = `([^`]*)`", go).group(1)
    assert copy.replace("%d", "{port}") == catalogue.MOSQUITTO_CONF


def test_a_variants_own_memory_per_process_is_what_the_fit_check_uses(monkeypatch):
    """reference/kafka_perf runs a JVM per producer and consumer: its own per_process_bytes, not
    the target's pubsub figure (PerfTest's one JVM over six processes), sizes the plan's fit check."""
    from msgbench.running import runner
    from msgbench.running.suites import Scenario

    reference = targets.load_target(REPO_ROOT / "targets" / "reference")
    kafka_perf, perftest = reference.variants["kafka_perf"], reference.variants["perftest"]
    assert reference.process_bytes("pubsub", kafka_perf) == kafka_perf.per_process_bytes == 256 << 20
    assert reference.process_bytes("pubsub", perftest) == reference.process_bytes("pubsub") == 40 << 20
    wl = spec.workload("pubsub")
    params = spec.resolve_params(wl, {"sources": 64, "source_threads": 64, "receivers": 64})
    # 132 processes: 5.3 GiB at 40 MiB each fits in 8 GiB (less the headroom), 33 GiB at 256 MiB does not
    monkeypatch.setattr(runner.sysinfo, "meminfo", lambda: {"MemTotal": 8 << 30})
    scenario = Scenario(name="fit", workload="pubsub", params=params)
    runner._job(scenario, None, params, wl, reference, perftest, 1, 0, None)
    with pytest.raises(runner.PlanError, match=r"132 processes x 268,435,456 B\): it will not fit"):
        runner._job(scenario, None, params, wl, reference, kafka_perf, 1, 0, None)
