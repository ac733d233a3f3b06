"""Nothing a run starts outlives it: not when a helper leaves the worker's session,
not when the harness is killed with SIGKILL (fake, Erlang, Go, C with placement=remote),
not when a runtime's version command hangs, not when Ctrl-C is pressed again during
clean-up. A run whose harness died is marked `abandoned` by the next start.

Processes are found by a marker in their environment (every worker, and all its
runtime starts, inherits the harness's environment), never by name alone.
"""

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from types import SimpleNamespace

import pytest

from msgbench.core import interrupts
from msgbench.core.paths import REPO_ROOT
from msgbench.data.store import Store
from msgbench.hosts import placement
from msgbench.workers import procs, targets
from msgbench.workers.worker import run_worker
from tests.conftest import FIXTURE_TARGETS, build_once

PYTHON = sys.executable
RING = {"workload": "ring", "options": {}, "params": {"n": 10, "m": 1, "payload": "BOO!"}, "repetition": 1}


# ---------------------------------------------------------------- helpers


def marked(marker: str) -> dict[int, str]:
    """pid -> command name of every live process whose environment carries the marker."""
    wanted = f"MSGBENCH_TEST_MARKER={marker}".encode()
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry.name}/comm") as f:
                name = f.read().strip()
        except OSError:
            continue
        if wanted in environ:
            found[int(entry.name)] = name
    return found


def wait_for(condition, timeout=15.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if result := condition():
            return result
        time.sleep(0.05)
    return None


def gone(marker: str, timeout=6.0) -> bool:
    return wait_for(lambda: not marked(marker), timeout) is not None


def kill_marked(marker: str) -> None:
    """A failed test must not leave its processes to the next one."""
    for pid in marked(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def harness(tmp_path, marker: str, *args, fake=True, extra_env=None):
    env = os.environ | {"MSGBENCH_STORE": str(tmp_path / "store.sqlite"), "MSGBENCH_TEST_MARKER": marker,
                        "TMPDIR": str(tmp_path)} | (extra_env or {})
    if fake:
        env["MSGBENCH_TARGETS_DIR"] = str(FIXTURE_TARGETS)
    else:
        env.pop("MSGBENCH_TARGETS_DIR", None)
    return subprocess.Popen([PYTHON, "-m", "msgbench", *args], cwd=REPO_ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def history(tmp_path) -> str:
    proc = subprocess.run([PYTHON, "-m", "msgbench", "--store", str(tmp_path / "store.sqlite"), "history"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=30, check=True)
    return proc.stdout


def only_run(tmp_path) -> tuple[dict, list[dict]]:
    store = Store(tmp_path / "store.sqlite")
    try:
        run = store.runs()[0]
        return run, store.measurements(run["id"])
    finally:
        store.close()


def measured(tmp_path) -> int:
    if not (tmp_path / "store.sqlite").exists():
        return 0
    store = Store(tmp_path / "store.sqlite")
    try:
        runs = store.runs()
        return runs[0]["measured"] if runs else 0
    finally:
        store.close()


def started(tmp_path) -> bool:
    """The run is stored (its runtime version queries, which start the runtime too, are done)."""
    if not (tmp_path / "store.sqlite").exists():
        return False
    store = Store(tmp_path / "store.sqlite")
    try:
        return bool(store.runs())
    finally:
        store.close()


def sigkill_mid_run(tmp_path, marker, running, *args, fake=True) -> dict[int, str]:
    """Start a run, wait until its worker runs and running(marked processes) holds,
    SIGKILL the harness. Returns what was running at the kill."""
    proc = harness(tmp_path, marker, *args, fake=fake)

    def now_running():
        found = marked(marker)
        return found if started(tmp_path) and running(found) else None

    try:
        seen = wait_for(now_running, 20)
        assert seen, f"the worker never got going: {proc.poll()} {marked(marker)}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        return seen
    finally:
        proc.kill()
        proc.communicate()


def ready(name: str) -> targets.Target:
    targets.registry.cache_clear()
    t = targets.target(name)
    targets.require_installed(t)
    build_once(t)
    return t


@pytest.fixture
def marker():
    tag = uuid.uuid4().hex
    yield tag
    kill_marked(tag)


# ---------------------------------------------------------------- the supervisor


def test_a_helper_that_left_the_workers_session_ends_with_it(marker, fake_targets):
    fake = targets.target("fake")
    outcome = run_worker(fake.argv(fake.variants["escape"], 1024), cwd=fake.folder,
                         env=os.environ | {"MSGBENCH_TEST_MARKER": marker}, request=RING | {"variant": "escape"},
                         target="fake", time_limit_s=1.0)
    assert outcome.status == "timeout"
    assert not marked(marker), "the helper that called setsid() outlived its worker"


def test_a_worker_whose_broker_is_gone_is_stopped_at_once_and_fails_with_why(marker, fake_targets):
    """run_worker's gone: once it names a loss (the runner's: the broker died), the worker is
    stopped then, not at its time limit, and the measurement fails with that reason."""
    fake = targets.target("fake")
    lost_at = time.monotonic() + 1.0
    outcome = run_worker(fake.argv(fake.variants["hang"], 1024), cwd=fake.folder,
                         env=os.environ | {"MSGBENCH_TEST_MARKER": marker}, request=RING | {"variant": "hang"},
                         target="fake", time_limit_s=60,
                         gone=lambda: "service x died" if time.monotonic() > lost_at else None)
    assert (outcome.status, outcome.error) == ("failed", "service x died")
    assert outcome.wall_s < 30, outcome.wall_s  # the time limit was 60 s
    assert not marked(marker)


def test_the_worker_reports_its_own_memory_and_exit_code_not_the_supervisors():
    big = [PYTHON, "-c", "import sys; b = b'x' * (96 << 20); sys.exit(7)"]
    small = ["sh", "-c", "exit 0"]
    outcomes = [run_worker(argv, cwd=REPO_ROOT, env=dict(os.environ), request=RING | {"variant": "ok"},
                           target="fake", time_limit_s=20) for argv in (big, small)]
    assert outcomes[0].exit_code == 7
    assert 96 << 20 < outcomes[0].max_rss_bytes < 160 << 20
    assert outcomes[1].exit_code == 0
    # Linux counts the forking parent's pages into a child's peak until it execs, so a
    # tiny worker shows about the supervisor's size (it showed the harness's before).
    assert outcomes[1].max_rss_bytes < 40 << 20


def test_a_worker_that_cannot_start_is_an_error_naming_it():
    outcome = run_worker(["/no/such/worker"], cwd=REPO_ROOT, env=dict(os.environ),
                         request=RING | {"variant": "ok"}, target="fake", time_limit_s=10)
    assert outcome.status == "error"
    assert "cannot start worker '/no/such/worker'" in outcome.error


def test_stdin_and_stdout_pass_through_the_supervisor(marker, fake_targets):
    fake = targets.target("fake")
    outcome = run_worker(fake.argv(fake.variants["ok"], 1024), cwd=fake.folder, env=dict(os.environ),
                         request=RING | {"variant": "ok"}, target="fake", time_limit_s=20)
    assert outcome.status == "ok" and outcome.measured["pass_wall_ns"] > 0 and outcome.verify["hops"] == 10


# ---------------------------------------------------------------- a harness killed with SIGKILL


def test_sigkilled_harness_leaves_nothing_running_and_its_run_is_abandoned(tmp_path, marker):
    seen = sigkill_mid_run(tmp_path, marker, lambda found: measured(tmp_path) >= 1 and "sleep" in found.values(),
                           "run", "ring", "--target", "fake", "--variant", "ok,escape", "--no-build",
                           "-p", "n=10", "--repeat", "2", "--warmup", "0", "--timeout", "60")
    assert "python3" in seen.values()
    assert gone(marker), f"left running after the harness died: {marked(marker)}"
    table = history(tmp_path)
    assert "abandoned" in table and "running" not in table
    run, measurements = only_run(tmp_path)
    assert run["status"] == "abandoned"
    assert [m["status"] for m in measurements] == ["ok"]  # what it measured is kept
    assert any(note.startswith("abandoned: its harness") for note in run["notes"])


def test_sigkilled_harness_takes_erlangs_beam_and_child_setup_along(tmp_path, marker):
    ready("erlang")
    seen = sigkill_mid_run(tmp_path, marker, lambda found: {"beam.smp", "erl_child_setup"} <= set(found.values()),
                           "run", "ring", "--target", "erlang", "--no-build", "-p", "n=100",
                           "-p", "m=100000000", "--repeat", "1", "--warmup", "0", fake=False)
    assert {"beam.smp", "erl_child_setup"} <= set(seen.values())
    assert gone(marker), f"left running after the harness died: {marked(marker)}"
    assert "abandoned" in history(tmp_path)


def test_sigkilled_harness_takes_the_go_worker_along(tmp_path, marker):
    ready("go")
    seen = sigkill_mid_run(tmp_path, marker, lambda found: "msgbench-go" in found.values(),
                           "run", "ring", "--target", "go", "--no-build", "-p", "n=100",
                           "-p", "m=100000000", "--repeat", "1", "--warmup", "0", fake=False)
    assert "msgbench-go" in seen.values()
    assert gone(marker), f"left running after the harness died: {marked(marker)}"


@pytest.mark.skipif(os.geteuid() != 0, reason="placement=remote on one machine needs root (a network namespace)")
@pytest.mark.xdist_group("netns")  # it removes leftover namespaces: with the others that make one (test_hosts.py)
def test_sigkilled_harness_takes_the_c_client_and_its_server_in_a_namespace_along(tmp_path, marker):
    ready("c")

    def client_and_server(found):
        ours = [pid for pid, name in found.items() if name == "msgbench-c"]
        return len({_netns(pid) for pid in ours} - {None}) == 2

    try:
        seen = sigkill_mid_run(tmp_path, marker, client_and_server, "run", "socket", "--target", "c",
                               "--no-build", "-p", "placement=remote", "-p", "size=1",
                               "-p", "total_bytes=1000000000", "--repeat", "1", "--warmup", "0", fake=False)
        assert list(seen.values()).count("msgbench-c") == 2
        assert gone(marker), f"left running after the harness died: {marked(marker)}"
    finally:
        for name in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.split("\n"):
            if name.split() and name.split()[0].startswith("msgbench-") and \
                    not os.path.exists(f"/proc/{name.split()[0].removeprefix('msgbench-')}"):
                subprocess.run(["ip", "netns", "del", name.split()[0]], check=False)


def _netns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return None


# ---------------------------------------------------------------- abandoned runs


def test_only_runs_whose_harness_is_gone_are_abandoned(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    dead = subprocess.Popen(["true"])
    dead.wait()
    alive = procs.harness_identity()
    reused = alive | {"start_time": alive["start_time"] - 1}  # the same pid, another process
    other_boot = alive | {"boot_id": "00000000-0000-0000-0000-000000000000"}
    other_host = alive | {"host": "elsewhere.invalid", "pid": dead.pid}
    ids = {name: store.start_run(name, None, {"harness": harness} if harness else {}, [])
           for name, harness in [("alive", alive), ("dead", alive | {"pid": dead.pid}), ("reused", reused),
                                 ("other_boot", other_boot), ("other_host", other_host), ("old", None)]}
    store.add_measurement(ids["dead"], {"scenario": "ring", "workload": "ring", "target": "fake", "variant": "ok",
                                        "variant_label": "idiomatic", "params": {}, "repetition": 1,
                                        "warmup": False, "status": "ok"})
    marked_ids = store.mark_abandoned(procs.harness_alive)
    assert sorted(marked_ids) == sorted([ids["dead"], ids["reused"], ids["other_boot"]])
    status = {name: store.run(run_id)["status"] for name, run_id in ids.items()}
    assert status == {"alive": "running", "dead": "abandoned", "reused": "abandoned", "other_boot": "abandoned",
                      "other_host": "running", "old": "running"}
    assert len(store.measurements(ids["dead"])) == 1
    assert store.mark_abandoned(procs.harness_alive) == []  # once


# ---------------------------------------------------------------- commands that hang


def test_a_hanging_runtime_version_command_is_stopped_and_named(tmp_path, marker):
    proc = harness(tmp_path, marker, "run", "ring", "--target", "fake", "--no-build", "--repeat", "1",
                   extra_env={"MSGBENCH_FAKE_VERSION_HANGS": "1"})
    try:
        _, err = proc.communicate(timeout=25)
    finally:
        proc.kill()
    assert proc.returncode == 2
    assert "target fake: its version command `python3 worker.py --version` did not finish within 10 s" in err
    assert "Traceback" not in err
    assert gone(marker, timeout=3), f"left running: {marked(marker)}"


def test_any_run_sweeps_what_a_harness_killed_with_sigkill_left_in_tmp(tmp_path, marker):
    exited = subprocess.Popen(["true"])
    exited.wait()
    dead_pid = exited.pid  # a pid that has exited
    left = [tmp_path / f"msgbench-service-{dead_pid}-redis-x", tmp_path / f"msgbench-ssh-{dead_pid}-y"]
    for path in left:
        path.mkdir()
    proc = harness(tmp_path, marker, "run", "ring", "--target", "fake", "--no-build", "-p", "n=10",
                   "--repeat", "1", "--warmup", "0")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert not any(path.exists() for path in left)


# ---------------------------------------------------------------- Ctrl-C during clean-up


def test_ctrl_c_again_during_clean_up_leaves_no_process_directory_or_lost_log(tmp_path, marker):
    proc = harness(tmp_path, marker, "run", "ring", "--target", "fake", "--variant", "stubborn", "--no-build",
                   "-p", "n=10", "--repeat", "1", "--warmup", "0", "--timeout", "60")
    try:
        assert wait_for(lambda: "sleep" in marked(marker).values(), 20), "the stubborn worker never started"
        assert any(tmp_path.glob("msgbench-service-*-nats-*"))
        for _ in range(3):  # the worker ignores SIGTERM: the second one lands while it is being stopped
            proc.send_signal(signal.SIGINT)
            time.sleep(0.3)
        _, err = proc.communicate(timeout=15)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert gone(marker, timeout=3), f"left running: {marked(marker)}"
    assert not list(tmp_path.glob("msgbench-service-*"))
    run, measurements = only_run(tmp_path)
    assert run["status"] == "interrupted"
    assert [m["status"] for m in measurements] == ["interrupted"]
    store = Store(tmp_path / "store.sqlite")
    assert "nats" in store.logs(run["id"])
    store.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="a network namespace needs root")
@pytest.mark.xdist_group("netns")  # a namespace of its own, with the others that make one (test_hosts.py)
def test_ctrl_c_again_while_the_namespace_is_removed_still_removes_it(monkeypatch):
    real_ip = placement._ip

    def ip_interrupted_once(*args, check=True):
        if args[:2] == ("link", "del"):  # the first step of removing the namespace
            monkeypatch.setattr(placement, "_ip", real_ip)
            os.kill(os.getpid(), signal.SIGINT)
        return real_ip(*args, check=check)

    previous = interrupts.install()
    try:
        with (pytest.raises(KeyboardInterrupt),
              placement.Peers([SimpleNamespace(params={"placement": "remote"})]) as peers):
            name = peers.namespace.name
            monkeypatch.setattr(placement, "_ip", ip_interrupted_once)
    finally:
        interrupts.restore(previous)
    assert name not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
