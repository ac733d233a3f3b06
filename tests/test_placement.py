"""Peer workloads: the server half starts where placement says, and namespaces never linger."""

import os
import subprocess

import pytest

from msgbench.hosts import placement
from tests.test_runner import only_run, run_cli

# The namespaces a run makes: compared with the machine's whole list before and after, and
# a run removes any msgbench- namespace it finds left over. Under pytest -n these tests
# run one after another on one worker with every other test that makes a namespace.
pytestmark = pytest.mark.xdist_group("netns")

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")


def namespaces() -> list[str]:
    """The machine's msgbench- namespaces but those of another live process: what a run
    here may make, and must remove (another test's run, or a testbed's hosts, may come and
    go meanwhile under pytest -n)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False).stdout
    names = [line.split()[0] for line in out.splitlines() if line.strip()]
    return [name for name in names if name.startswith(placement.NAMESPACE_PREFIX)
            and not other_process(name.removeprefix(placement.NAMESPACE_PREFIX))]


def other_process(pid: str) -> bool:
    return pid.isdigit() and int(pid) != os.getpid() and os.path.exists(f"/proc/{pid}")


def test_local_placement_runs_the_server_here(fake_targets):
    assert run_cli("run", "socket", "--target", "fake", "-p", "size=100", "--repeat", "1", "--no-build") == 0
    _, measurements, _ = only_run(fake_targets)
    verify = measurements[-1]["verify"]
    assert verify["bytes_received"] == 100
    assert verify["server_netns"] == verify["client_netns"]


@needs_root
def test_remote_placement_runs_the_server_in_a_namespace_and_removes_it(fake_targets):
    leftover = "msgbench-999999"  # as if a crashed run had left it: no such process
    subprocess.run(["ip", "netns", "add", leftover], check=True)
    before = set(namespaces()) - {leftover}
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "-p", "size=100",
                   "--repeat", "2", "--no-build") == 0
    run, measurements, _ = only_run(fake_targets)
    for m in measurements:
        assert m["status"] == "ok", m["error"]
        assert m["verify"]["server_netns"] != m["verify"]["client_netns"]
        assert m["verify"]["bytes_received"] == 100
    assert any("network namespace msgbench-" in note for note in run["notes"])
    assert any(leftover in note and "left over" in note for note in run["notes"])
    assert set(namespaces()) == before


@needs_root
def test_namespace_is_removed_when_the_run_is_interrupted(fake_targets, monkeypatch):
    before = set(namespaces())

    def interrupt(*args, **kwargs):
        assert set(namespaces()) - before, "the namespace should exist while measuring"
        raise KeyboardInterrupt

    monkeypatch.setattr("msgbench.running.runner.run_worker", interrupt)
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "--no-build") == 130
    assert set(namespaces()) == before


def test_remote_without_root_is_refused_before_launch(fake_targets, monkeypatch, capsys):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "--no-build") == 2
    assert "needs root to create a network namespace" in capsys.readouterr().err


def test_ssh_remote_wraps_the_server_command(fake_targets):
    from msgbench.workers import targets

    t = targets.target("fake")
    peers = placement.Peers([], remote="bench@192.0.2.7", remote_dir="/opt/msgbench/targets/fake")
    env = peers.env_for(t, t.variants["ok"], {"placement": "remote"}, 1024, "socket")
    assert env["MSGBENCH_PEER_HOST"] == "192.0.2.7"  # what ssh -G says it connects to
    assert env["MSGBENCH_PEER_COMMAND"].startswith('["ssh", "-o", "BatchMode=yes", "bench@192.0.2.7", "cd"')


@needs_root
def test_a_rate_alone_shapes_the_namespace_link_even_without_netem(fake_targets):
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "-p", "size=100",
                   "--netem", "rate 100mbit", "--repeat", "1", "--warmup", "0", "--no-build") == 0
    run, measurements, _ = only_run(fake_targets)
    assert measurements[-1]["status"] == "ok", measurements[-1]["error"]
    assert any("netem rate 100mbit" in note for note in run["notes"])


def test_results_show_each_target_as_a_fraction_of_the_reference(fake_targets, capsys):
    assert run_cli("run", "socket", "--target", "fake", "--variant", "ok,ref", "-p", "size=10",
                   "--repeat", "1", "--no-build") == 0
    out = capsys.readouterr().out
    assert "x reference" in out
    assert "1.00x" in out


def test_a_size_larger_than_the_total_is_refused_before_launch(fake_targets, capsys):
    assert run_cli("run", "socket", "--target", "fake", "-p", "size=100", "-p", "total_bytes=10", "--no-build") == 2
    assert "size = 100 and total_bytes = 10: socket requires size <= total_bytes" in capsys.readouterr().err
