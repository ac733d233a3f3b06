"""msgbench run with its builds beside it (msgbench/running/beside.py): a scenario is
measured as soon as its targets are built, while slower builds go on; those measurements
name the builds they shared the machine with; a failed build leaves its points stored
as failed, with the reason, and the other targets measured."""

import dataclasses
import os
import threading
import time

from msgbench.cli import main
from msgbench.data import results
from msgbench.data.store import Store
from msgbench.running import building
from msgbench.running.beside import BuildsBeside
from msgbench.workers import targets

# pubsub (fakeknee) comes first in the suite, ring (fake) second.
SUITE = """
description = "two scenarios on two targets"
repeat = 2
warmup = 1
[[scenario]]
name = "pubsub"
workload = "pubsub"
targets = ["fakeknee"]
params = { duration_s = 0.1, rate = 1000 }
x = "payload_bytes"
x_value = "payload_bytes"
cases = [{ payload_bytes = 16 }]
[[scenario]]
name = "ring"
workload = "ring"
targets = ["fake"]
params = { m = 2 }
x = "n"
x_value = "n"
cases = [{ n = 10 }]
"""


def _read(path) -> str:
    return path.read_text() if path.exists() else ""


def _suite(tmp_path):
    path = tmp_path / "two.toml"
    path.write_text(SUITE)
    return str(path)


def test_a_scenario_is_measured_while_another_targets_build_still_runs(fake_targets, tmp_path, monkeypatch,
                                                                       capsys):
    real_build = targets.build
    ended = {}
    phases = tmp_path / "phases"

    pid_file = tmp_path / "build.pid"

    def build(t, **kwargs):
        if t.name == "fakeknee":  # a slow build: it ends only once ring's rows are on screen
            t = dataclasses.replace(t, build=f'echo $$ > {pid_file}; for i in $(seq 1200); do '
                                             f'grep -q "first table row" {phases} && exit; sleep 0.05; done')
        real_build(t, **kwargs)
        ended[t.name] = time.time()

    # The slow build's scheduling policy, watched from here: a process inside the build
    # could not see its own SCHED_IDLE spans on a busy machine (an idle-priority process
    # runs only when nothing else wants the CPU, its watcher too).
    policies, watching = set(), threading.Event()

    def watch():
        while not pid_file.exists() or not pid_file.read_text().strip():
            if watching.wait(0.005):
                return
        pid = int(pid_file.read_text())
        while not watching.wait(0.002):
            try:
                policies.add(os.sched_getscheduler(pid))
            except ProcessLookupError:
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    monkeypatch.setattr(targets, "build", build)
    monkeypatch.setenv("MSGBENCH_PHASES", str(phases))
    try:
        assert main(["run", "--suite", _suite(tmp_path), "--no-probe"]) == 0
    finally:
        watching.set()
        watcher.join()
    err = capsys.readouterr().err
    store = Store(fake_targets)
    run_id = store.resolve("latest")
    measured = store.measurements(run_id)
    assert [m["scenario"] for m in measured] == ["ring"] * 3 + ["pubsub"] * 3  # ring did not wait
    ring = [m for m in measured if m["scenario"] == "ring"]
    assert all(m["worker"]["beside_builds"] == ["fakeknee"] for m in ring)
    assert not any("beside_builds" in m["worker"] for m in measured if m["scenario"] == "pubsub")
    # ring's rows were on screen before fakeknee was built
    assert err.index("ring: its planned repetitions are done") < err.index("built fakeknee")
    summary = {s["scenario"]: s for s in results.run_document(store, [run_id])["runs"][0]["summary"]}
    assert "noise:builds" in summary["ring"]["warning_kinds"]
    assert "noise:builds" not in summary["pubsub"]["warning_kinds"]
    assert "2 of 2 repetitions measured while builds ran (fakeknee)" in " ".join(summary["ring"]["warnings"])
    assert set(store.run(run_id)["metadata"]["runtimes"]) == {"fake", "fakeknee"}  # asked once built
    # the slow build yielded the CPU while ring was measured, and only then
    assert policies == {os.SCHED_IDLE, os.SCHED_OTHER}
    spans = dict(line.split("\t", 1) for line in phases.read_text().splitlines())
    assert set(spans) == {"first table row", "builds"}
    first_row = int(spans["first table row"].split("\t")[0])
    assert first_row < ended["fakeknee"] * 1000  # the first row came before the last build ended


def test_a_failed_build_is_named_and_its_points_stored_as_failed_and_the_others_measured(fake_targets, tmp_path,
                                                                                          monkeypatch, capsys):
    monkeypatch.setenv("FAKE_BUILD_FAILS", "1")  # fake's build fails; fakeknee has nothing to build
    assert main(["run", "--suite", _suite(tmp_path), "--no-probe"]) == 1
    err = capsys.readouterr().err
    store = Store(fake_targets)
    measured = store.measurements(store.resolve("latest"))
    ring = [m for m in measured if m["scenario"] == "ring"]
    assert len(ring) == 1 and ring[0]["status"] == "failed"
    assert ring[0]["error"].startswith("not measured: building target fake failed")
    assert "whole output in " in ring[0]["error"]
    assert [m["status"] for m in measured if m["scenario"] == "pubsub"] == ["ok"] * 3
    assert "ring n=10 fake/ok: not measured: building target fake failed" in err
    assert "build of fake failed" in err


class _Job:
    def __init__(self, name):
        self.name = name


def test_builds_that_should_end_within_seconds_are_waited_for_rather_than_measured_beside(tmp_path):
    (tmp_path / "t.json").write_text('{"quick": 0.1, "slowish": 0.3}')
    release = threading.Event()
    steps = {"quick": lambda: None, "slowish": lambda: release.wait(10)}
    builder = building.Builder(steps, 2, tmp_path / "t.json", say=lambda line: None).start()
    beside = BuildsBeside(builder, needs=lambda job: [job.name])
    threading.Timer(0.3, release.set).start()
    assert beside.next_scenario({"a": [_Job("quick")]}) == "a"
    assert builder.all_done()  # slowish was expected within QUIET_WAIT_S: waited for
    builder.join()


def test_a_build_never_timed_is_not_waited_for(tmp_path):
    release = threading.Event()
    builder = building.Builder({"quick": lambda: None, "long": lambda: release.wait(10)}, 2,
                               tmp_path / "t.json", say=lambda line: None).start()
    beside = BuildsBeside(builder, needs=lambda job: [job.name])
    assert beside.next_scenario({"b": [_Job("long")], "a": [_Job("quick")]}) == "a"
    assert builder.under_way() == ["long"]
    release.set()
    builder.join()
