"""msgbench build: builds run side by side within --jobs, the longest (as last timed) first,
each one's failure kept with its message, and the times remembered."""

import dataclasses
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from msgbench.cli import main
from msgbench.core.paths import REPO_ROOT
from msgbench.running import building
from msgbench.workers import targets


def test_two_jobs_really_build_side_by_side(tmp_path):
    # Each step waits for the other at a barrier: one at a time, the first would time out.
    both = threading.Barrier(2, timeout=20)
    steps = {"a": both.wait, "b": both.wait}
    done = building.build_all(steps, 2, tmp_path / "times.json", say=lambda line: None)
    assert sorted(b.name for b in done) == ["a", "b"] and all(b.error is None for b in done)


def _counting_step():
    """A build step of 50 ms that counts the steps running at once; most[0]: the most it saw."""
    running, most = [0], [0]
    lock = threading.Lock()

    def step():
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.05)
        with lock:
            running[0] -= 1

    return step, most


def test_one_job_builds_one_at_a_time(tmp_path):
    step, most = _counting_step()
    building.build_all({"a": step, "b": step, "c": step}, 1, tmp_path / "t.json", say=lambda line: None)
    assert most[0] == 1


def test_a_failed_build_keeps_its_message_and_the_others_still_build(tmp_path):
    def broken():
        raise RuntimeError("building target x failed (exit 2): no such file")

    said = []
    done = building.build_all({"x": broken, "y": lambda: None}, 2, tmp_path / "t.json", said.append)
    by_name = {b.name: b for b in done}
    assert "no such file" in by_name["x"].error and by_name["y"].error is None
    assert sorted(line.split(" in ")[0].split(" after ")[0] for line in said) == ["build of x failed", "built y"]
    assert set(json.loads((tmp_path / "t.json").read_text())) == {"y"}  # only what built is timed


def test_the_longest_builds_start_first_and_the_untimed_before_them():
    assert building.order(["go", "rust", "c", "new"], {"go": 20.0, "rust": 300.0, "c": 3.0}) == \
        ["new", "rust", "go", "c"]


def test_jobs_out_of_range_is_one_line(capsys):
    assert main(["build", "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["msgbench: error: --jobs 0 is out of range: it must be >= 1"]


def test_two_jobs_never_run_more_than_two_builds_at_once(tmp_path):
    step, most = _counting_step()
    done = building.build_all({n: step for n in "abcde"}, 2, tmp_path / "t.json", say=lambda line: None)
    assert most[0] == 2 and len(done) == 5


def test_a_build_waits_for_its_toolchain_while_the_installer_runs_and_the_others_start(tmp_path):
    installed, installer_done = threading.Event(), threading.Event()
    order = []
    steps = {"needs-ghc": lambda: order.append(("needs-ghc", installed.is_set())),
             "ready": lambda: (order.append("ready"), installed.set())}  # the install ends as it builds
    missing = {"needs-ghc": lambda: [] if installed.is_set() else ["ghc"]}
    builder = building.Builder(steps, 2, tmp_path / "t.json", say=lambda line: None, missing=missing,
                               installing=lambda: not installer_done.is_set(), poll_s=0.01)
    done = builder.start().join()
    installer_done.set()
    assert order == ["ready", ("needs-ghc", True)]  # never timed, first in line: it still waited for ghc
    assert all(b.error is None for b in done)


def test_a_build_whose_toolchain_never_comes_fails_once_the_installer_ends_without_running(tmp_path):
    ran = []
    builder = building.Builder({"ghc": lambda: ran.append("ghc"), "go": lambda: ran.append("go")}, 2,
                               tmp_path / "t.json", say=lambda line: None,
                               missing={"ghc": lambda: ["ghc", "hlint"]}, installing=lambda: False)
    by_name = {b.name: b for b in builder.start().join()}
    assert ran == ["go"] and by_name["go"].error is None
    assert by_name["ghc"].error == "ghc cannot build: it needs ghc, hlint, which is not installed"


def test_the_longest_build_starts_first_then_the_quick_ones_shortest_first_then_the_rest_longest_first():
    times = {"caf": 240.0, "rust": 83.0, "ghc": 40.0, "c": 11.0, "go": 4.0}
    assert building.start_order(list(times), times, 2) == ["caf", "go", "c", "rust", "ghc"]
    assert building.start_order([*times, "new"], times, 2)[:2] == ["new", "caf"]
    assert building.start_order(list(times), times, 1) == ["caf", "rust", "ghc", "c", "go"]
    assert building.start_order(list(times), times, 3) == ["caf", "rust", "go", "c", "ghc"]


def test_the_second_longest_does_not_start_last_nor_the_broker_clients_late():
    """This VM's times (make run, 2026-11-28): the broker clients (a few seconds each, and
    the Kafka fetch) make pubsub measurable first; rust, the second longest, starts as soon
    as they are built, not last, after every other build."""
    times = {"caf": 96.0, "rust": 36.0, "ghc": 22.0, "java": 17.0, "elixir": 12.0, "node": 9.4, "kafka": 8.8,
             "c": 6.6, "erlang": 4.8, "zeromq": 2.7, "go": 2.3, "redis": 1.8, "nats": 1.3, "tcp": 0.9}
    assert building.start_order(list(times), times, 2) == [
        "caf", "tcp", "nats", "redis", "go", "zeromq", "erlang", "c", "kafka", "node", "rust", "ghc", "java", "elixir"]


def test_the_time_left_comes_from_the_last_times_and_is_unknown_for_a_build_never_timed(tmp_path):
    (tmp_path / "t.json").write_text(json.dumps({"a": 10.0, "b": 30.0}))
    builder = building.Builder({"a": lambda: None, "b": lambda: None}, 2, tmp_path / "t.json", say=lambda line: None)
    assert builder.expected_left_s() == 20.0  # 40 s of builds over 2 jobs
    builder.steps["new"] = lambda: None
    assert builder.expected_left_s() == float("inf")


def test_a_target_build_keeps_its_whole_output_in_its_log_and_the_error_names_it(fake_targets, tmp_path,
                                                                                  monkeypatch):
    monkeypatch.setenv("FAKE_BUILD_FAILS", "1")
    log = tmp_path / "logs" / "fake.log"
    with pytest.raises(targets.TargetError) as failed:
        targets.build(targets.target("fake"), log=log)
    assert "fake: the compiler refused" in log.read_text()
    assert f"whole output in {log}" in str(failed.value) and "the compiler refused" in str(failed.value)


def test_a_build_beside_a_run_has_its_own_process_group_and_its_compile_jobs(fake_targets, tmp_path):
    class Groups:
        def __init__(self):
            self.added, self.removed = [], []

        def add(self, pgid):
            self.added.append(pgid)

        def remove(self, pgid):
            self.removed.append(pgid)

    groups = Groups()
    t = dataclasses.replace(targets.target("fake"), build='echo "$MAKEFLAGS $CARGO_BUILD_JOBS"; ps -o pgid= $$')
    log = tmp_path / "fake.log"
    targets.build(t, log=log, jobs=2, group=groups)
    jobs, pgid = log.read_text().splitlines()
    assert jobs == "-j2 2" and groups.added == groups.removed == [int(pgid)]


def test_builds_yield_the_cpu_while_a_measurement_runs_and_only_then(tmp_path):
    build = subprocess.Popen(["bash", "-c", "sleep 30 & wait"], process_group=0)
    try:
        deadline = time.monotonic() + 5
        while len(building._members({build.pid})) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)  # the shell and its sleep
        yielding = building.Yielding()
        yielding.add(build.pid)
        members = building._members({build.pid})
        assert len(members) == 2
        assert {os.sched_getscheduler(pid) for pid in members} == {os.SCHED_OTHER}
        yielding.yield_cpu(True)
        assert {os.sched_getscheduler(pid) for pid in members} == {os.SCHED_IDLE}
        yielding.yield_cpu(False)
        assert {os.sched_getscheduler(pid) for pid in members} == {os.SCHED_OTHER}
        yielding.yield_cpu(True)
        late = subprocess.Popen(["sleep", "30"], process_group=0)
        yielding.add(late.pid)  # a build started during a measurement yields at once
        assert os.sched_getscheduler(late.pid) == os.SCHED_IDLE
        yielding.stop()
        assert build.wait(5) == 0 or build.returncode is not None
        assert late.wait(5) == -15
    finally:
        for proc in (build,):
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()


def test_a_machine_that_never_built_starts_in_the_order_of_the_shipped_times(tmp_path):
    shipped = json.loads(building.SHIPPED_TIMES.read_text())
    assert {"caf", "rust", "go", "nats"} <= set(shipped)
    builder = building.Builder({n: lambda: None for n in ("go", "nats", "rust", "caf")}, 2,
                               tmp_path / "never-written.json", say=lambda line: None)
    longest = max(("go", "nats", "rust", "caf"), key=shipped.get)
    rest = sorted({"go", "nats", "rust", "caf"} - {longest}, key=shipped.get)
    assert builder.waiting == [longest, *rest]


INTERRUPTS = {
    # Ctrl-C while the build runs.
    "during the build": """
def interrupt():
    while not pathlib.Path({pid_file!r}).exists():
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
""",
    # Ctrl-C inside Popen, once the child exists and before Popen has returned it: what a
    # loaded machine did in CI, where the build wrote its pid before Popen came back.
    "inside Popen": """
class InterruptedPopen(subprocess.Popen):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        while not pathlib.Path({pid_file!r}).exists():
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGINT)

subprocess.Popen = InterruptedPopen
""",
}


@pytest.mark.parametrize("when", INTERRUPTS)
def test_an_interrupted_build_raises_the_interrupt_and_leaves_no_process(fake_targets, tmp_path, when):
    """Ctrl-C during a build that leads no group of its own (msgbench build): the build is
    killed and the KeyboardInterrupt is what the harness sees."""
    pid_file = tmp_path / "build.pid"
    script = f"""
import dataclasses, os, pathlib, signal, subprocess, threading, time
from msgbench.workers import targets
{INTERRUPTS[when].format(pid_file=str(pid_file))}
t = dataclasses.replace(targets.target("fake"), build="echo $$ > {pid_file}; exec sleep 30")
try:
    targets.build(t, quiet=True)
except BaseException as exc:
    print(type(exc).__name__)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=20,
                          env=os.environ | {"PYTHONPATH": str(REPO_ROOT)})
    assert done.stdout.strip() == "KeyboardInterrupt", done.stderr
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
