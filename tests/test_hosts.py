"""Roles placed on hosts over real ssh: three network namespaces on one bridge, each with
its own sshd on a key made for the test (msgbench.hosts.testbed), reached through msgbench's
real ssh path (inventory, ssh -G, a multiplexed master, rsync, remote.py)."""

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from msgbench.core.paths import REPO_ROOT
from msgbench.hosts import chat_split, placement, remote, testbed
from msgbench.hosts import inventory as hosts
from msgbench.running import workloads as workload_runs
from msgbench.workers import chat_server, sysinfo, targets
from tests.conftest import processes_matching, ready_target
from tests.test_runner import only_run, run_cli


def control_dirs_of(harness_pid: int) -> list[Path]:
    """The ssh control directories a harness made (named after its pid)."""
    return list(Path(tempfile.gettempdir()).glob(f"{hosts.TEMP_PREFIX}{harness_pid}-*"))


def assert_swept_by_the_next_run(harness_pid: int) -> None:
    """A dead harness's control directories are gone after a run's clean-up: this one's,
    or that of a run another test started meanwhile (make test runs tests side by side)."""
    hosts.remove_leftover_control_dirs()
    assert control_dirs_of(harness_pid) == []


# Under pytest -n, on one worker: the testbed (three hosts in network namespaces, each with
# its sshd) is the module's fixture, set up once rather than once per worker, and these
# tests run one after another with the others that make namespaces (tests/test_placement.py,
# tests/test_processes.py; docs/decisions.md).
pytestmark = pytest.mark.xdist_group("netns")

needs_bed = pytest.mark.skipif(
    os.geteuid() != 0 or not os.path.exists(testbed.SSHD) or not shutil.which("rsync"),
    reason="hosts in namespaces need root, openssh-server and rsync")


# ---------------------------------------------------------------- without hosts


def test_an_inventory_is_read_from_toml_or_an_ansible_yaml(tmp_path):
    (tmp_path / "hosts.toml").write_text('ssh_config = "cfg"\n[hosts.h1]\ndir = "/srv/mb"\n'
                                         '[hosts.h2]\ndeploy = "same"\n')
    inv = hosts.load_inventory(tmp_path / "hosts.toml")
    assert list(inv.hosts) == ["h1", "h2"]
    assert inv.ssh_config == str(tmp_path / "cfg")
    assert inv.hosts["h1"].dir == "/srv/mb" and inv.hosts["h2"].deploy == "same"
    assert inv.hosts["h1"].folder(REPO_ROOT / "targets" / "go") == "/srv/mb/targets/go"

    (tmp_path / "inventory.yml").write_text(
        "all:\n  children:\n    bench:\n      hosts:\n        broker1:\n          ansible_host: 10.0.0.5\n"
        "          ansible_user: bench\n          msgbench_dir: /opt/mb\n        load1:\n")
    inv = hosts.load_inventory(tmp_path / "inventory.yml")
    assert inv.hosts["broker1"].options == ["-o", "HostName=10.0.0.5", "-l", "bench"]
    assert inv.hosts["broker1"].dir == "/opt/mb"
    assert "load1" in inv.hosts


@pytest.mark.parametrize(("text", "message"), [
    ('[hosts.h1]\ndeploy = "scp"\n', "deploy = 'scp'; it takes rsync or same"),
    ('[hosts.h1]\nport = 22\n', "host h1 in"),
    ('[hosts.local]\n', "'local' is this machine"),
    ("[hosts\n", "is not TOML"),
])
def test_a_bad_inventory_is_one_clear_line(tmp_path, text, message):
    (tmp_path / "hosts.toml").write_text(text)
    with pytest.raises(hosts.HostError, match=None) as caught:
        hosts.load_inventory(tmp_path / "hosts.toml")
    assert message in str(caught.value)


def test_place_maps_roles_to_hosts():
    assert placement.parse_place("broker=h1,sources=h2,receivers=h3") == {
        "broker": ["h1"], "sources": ["h2"], "receivers": ["h3"]}
    assert placement.parse_place("server=h1,clients=h2,h3") == {"server": ["h1"], "clients": ["h2", "h3"]}
    for bad in ("h1", "server=", "server=h1,server=h2"):
        with pytest.raises(placement.PlacementError, match="--place"):
            placement.parse_place(bad)


def test_a_role_the_workload_lacks_or_an_unknown_host_is_refused(fake_targets, tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)  # hosts need no root (a namespace would)
    (tmp_path / "hosts.toml").write_text("[hosts.h1]\n[hosts.h2]\n")
    common = ["run", "socket", "--target", "fake", "-p", "placement=remote", "--no-build",
              "--hosts", str(tmp_path / "hosts.toml")]
    assert run_cli(*common, "--place", "broker=h1") == 2
    assert "no workload of this run has a role 'broker'; roles are socket: server" in capsys.readouterr().err
    assert run_cli(*common, "--place", "server=h7") == 2
    assert "host 'h7' is not in the inventory" in capsys.readouterr().err
    assert run_cli(*common) == 2
    assert "say which host runs the server, e.g. --place server=h1" in capsys.readouterr().err
    assert run_cli(*common[:4], "-p", "placement=local", *common[6:], "--place", "server=h1") == 2
    assert "give -p placement=remote too" in capsys.readouterr().err


def test_chat_roles_are_the_server_kinds_and_each_load_generator_owns_whole_groups(fake_targets, tmp_path,
                                                                                    capsys):
    (tmp_path / "hosts.toml").write_text("[hosts.h1]\n[hosts.h2]\n[hosts.h3]\n")
    common = ["run", "chat", "--target", "fake", "--no-build", "--hosts", str(tmp_path / "hosts.toml")]
    assert run_cli(*common, "-p", "server=ws", "-p", "groups=1", "--place", "server=h1,clients=h2,h3") == 2
    assert "2 load generators each own whole groups, and a point has groups=1; give groups >= 2" in (
        capsys.readouterr().err)
    assert run_cli(*common, "--place", "server=h1") == 2
    assert "chat's roles are the chat server kind's; give -p server=ws" in capsys.readouterr().err
    assert run_cli(*common, "-p", "server=ws", "--place", "server=h1,clients=h2,h2") == 2
    assert "a host is named twice" in capsys.readouterr().err


def test_pubsub_roles_take_one_host_each(tmp_path):
    (tmp_path / "hosts.toml").write_text("[hosts.h1]\n[hosts.h2]\n[hosts.h3]\n")
    inventory = hosts.load_inventory(tmp_path / "hosts.toml")
    with pytest.raises(placement.PlacementError) as caught:
        placement.check_roles(placement.parse_place("broker=h1,sources=h2,h3"), workload_runs.roles({"pubsub"}),
                              inventory, workload_runs.spread_roles())
    assert ("--place sources=h2,h3: role sources runs on one host; only clients (the chat server kind's load "
            "generators) take several") in str(caught.value)
    placement.check_roles(placement.parse_place("server=h1,clients=h2,h3"), workload_runs.roles({"chat"}), inventory,
                          workload_runs.spread_roles())


def test_pubsub_latency_across_two_kernels_is_refused(tmp_path):
    """One-way latency from CLOCK_MONOTONIC stamps is one clock only on one kernel (one boot id)."""
    from types import SimpleNamespace

    (tmp_path / "hosts.toml").write_text("[hosts.h2]\n[hosts.h3]\n")
    job = SimpleNamespace(scenario=SimpleNamespace(workload="pubsub"), params={"rate": 100})
    peers = placement.Peers([job], inventory=hosts.load_inventory(tmp_path / "hosts.toml"),
                            place={"sources": ["h2"], "receivers": ["h3"]}, roles=workload_runs.roles({"pubsub"}))
    peers.facts = {"h2": {"boot_id": "a"}, "h3": {"boot_id": "b"}}
    with pytest.raises(placement.PlacementError, match="which h2 and h3 \\(two kernels\\) do not share"):
        workload_runs.check_hosts([job], peers)
    job.params["rate"] = 0  # throughput alone: counted on the receivers' clock
    assert workload_runs.check_hosts([job], peers) == []
    job.params["rate"], peers.facts["h3"]["boot_id"] = 100, "a"
    notes = workload_runs.check_hosts([job], peers)
    assert len(notes) == 1 and "one clock" in notes[0]


def test_groups_are_split_whole_and_facts_merged_without_averaging_percentiles():
    assert chat_split.split_groups(5, 2) == [(0, 3), (3, 2)]
    assert chat_split.split_groups(4, 4) == [(0, 1), (1, 1), (2, 1), (3, 1)]
    with pytest.raises(chat_split.SplitError, match="need at least as many groups"):
        chat_split.split_groups(1, 2)
    from msgbench.workers.worker import Outcome

    def generator(sent, window_ns, latency, lead):
        measured = {"received_in_window": sent - 1, "loadgen_cpu_ns": 10, "send_window_ns": window_ns,
                    "latency_max_ns": max(b for b, _ in latency), "server_cpu_ns": 7}
        if not lead:
            del measured["server_cpu_ns"]
        return Outcome(status="ok", measured=measured, verify={"sent": sent, "received": sent, "users": 6},
                       histograms={"latency_ns": latency}, series=[{"t_ms": 1, "server_rss_bytes": 5}] if lead else [])

    merged = Outcome(status="ok")
    chat_split.merge_facts(merged, [generator(10, 100, [[3, 9], [100, 1]], True),
                                    generator(20, 120, [[3, 1], [120, 19]], False)])
    assert merged.verify == {"sent": 30, "received": 30, "users": 12}
    assert merged.measured["received_in_window"] == 28 and merged.measured["loadgen_cpu_ns"] == 20
    assert merged.measured["send_window_ns"] == 120 and merged.measured["latency_max_ns"] == 120
    assert merged.measured["server_cpu_ns"] == 7  # the lead's reading of the server
    assert merged.histograms["latency_ns"] == [[3, 10], [100, 1], [120, 19]]  # buckets added, not percentiles
    assert merged.series == [{"t_ms": 1, "server_rss_bytes": 5}]


def test_an_ssh_alias_is_resolved_to_the_address_it_connects_to(tmp_path):
    (tmp_path / "cfg").write_text("Host benchbox\n  HostName 192.0.2.7\n")
    assert hosts.address_of("benchbox", ["ssh", "-F", str(tmp_path / "cfg")]) == "192.0.2.7"


def test_the_remote_wrapper_ends_its_command_when_its_output_pipe_closes_and_reports_usage():
    """remote.py as ssh runs it, here: when the reader of its stdout goes (sshd closing the
    channel), the command's whole session is ended and the usage line says why."""
    wrapper = subprocess.Popen([sys.executable, "-I", "-S", remote.__file__, "--grace", "1", "--",
                                "sh", "-c", "sleep 31341 & exec sleep 31341"],
                               stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while len(processes_matching("sleep 31341")) < 2:
        assert time.monotonic() < deadline, "the command never started"
        time.sleep(0.05)
    wrapper.stdout.close()
    _, err = wrapper.communicate(timeout=10)
    assert wrapper.returncode == 128 + signal.SIGTERM
    report = remote.parse_report(err.decode())
    assert report["why"] == "its ssh session ended" and report["exit_code"] == -signal.SIGTERM
    assert report["cpu_s"] >= 0 and report["max_rss_bytes"] > 0
    assert processes_matching("sleep 31341") == []  # its background child too: the whole session


# ---------------------------------------------------------------- on hosts in namespaces


@pytest.fixture(scope="module")
def bed(tmp_path_factory):
    if os.geteuid() != 0 or not os.path.exists(testbed.SSHD) or not shutil.which("rsync"):
        pytest.skip("hosts in namespaces need root, openssh-server and rsync")
    directory = tmp_path_factory.mktemp("bed")
    made = testbed.up(directory, 3)
    yield made
    testbed.down(directory)
    assert not subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.count(
        f"{testbed.PREFIX}{made.tag}-")


def settled(bed, limit_s: float = 15.0) -> dict[str, list[str]]:
    """What still runs on each host once sessions had time to close (sshd aside)."""
    deadline = time.monotonic() + limit_s
    while True:
        left = {alias: bed.processes(alias) for alias in bed.hosts}
        if not any(left.values()) or time.monotonic() > deadline:
            return {a: p for a, p in left.items() if p}
        time.sleep(0.2)


def netns_of(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/net")


@needs_bed
def test_a_remote_process_dies_with_its_ssh_session(bed):
    inventory = hosts.load_inventory(bed.inventory)
    with hosts.connected(inventory) as ssh:
        host = inventory.host("h2")
        argv = ssh.command(host, ["sleep", "31337"], cwd="/")
        client = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while not any("sleep 31337" in p for p in bed.processes("h2")):
            assert time.monotonic() < deadline, "the remote sleep never started"
            time.sleep(0.1)
        client.kill()
        client.wait()
        client.stdout.close()
        client.stderr.close()
        client.stdin.close()
        assert settled(bed) == {}


@needs_bed
def test_socket_server_on_a_host_over_ssh(bed, fake_targets, capsys):
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "-p", "size=100",
                   "--hosts", str(bed.inventory), "--place", "server=h2", "--repeat", "2", "--no-build") == 0
    run, measurements, _ = only_run(fake_targets)
    h2 = netns_of(bed.sshd_pid("h2"))
    for m in measurements:
        assert m["status"] == "ok", m["error"]
        assert m["verify"]["server_netns"] == h2 != m["verify"]["client_netns"]
        assert m["verify"]["bytes_received"] == 100
    assert f"role server ran on h2 ({bed.hosts['h2']})" in run["notes"]
    assert (bed.dir / "h2" / "tests/fixtures/targets/fake/worker.py").exists()  # rsync ran
    facts = run["metadata"]["hosts"]["h2"]
    assert facts["address"] == bed.hosts["h2"] and facts["cores"] >= 1 and facts["kernel"].startswith("Linux")
    assert facts["runtimes"]["fake"].startswith("Python")
    capsys.readouterr()
    assert run_cli("show", "latest") == 0
    assert f"host h2: {bed.hosts['h2']}: " in capsys.readouterr().out
    assert settled(bed) == {}


@needs_bed
def test_an_unreachable_host_is_named(bed, fake_targets, tmp_path, capsys):
    config = tmp_path / "ssh_config"
    # An address on the bridge where nothing listens: refused at once.
    config.write_text(bed.ssh_config.read_text() + f"\nHost gone\n  HostName {bed.harness_address}\n  Port 9\n")
    inventory = tmp_path / "hosts.toml"
    inventory.write_text(f'ssh_config = "{config}"\n[hosts.gone]\n')
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "--hosts", str(inventory),
                   "--place", "server=gone", "--repeat", "1", "--no-build") == 2
    err = capsys.readouterr().err
    assert "host gone is unreachable over ssh" in err and "refused" in err


@needs_bed
def test_a_host_must_hold_the_same_revision_with_deploy_same(bed, fake_targets, tmp_path, capsys):
    (tmp_path / "hosts.toml").write_text(f'ssh_config = "{bed.ssh_config}"\n[hosts.h2]\n'
                                         f'dir = "{tmp_path}"\ndeploy = "same"\n')
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "--hosts",
                   str(tmp_path / "hosts.toml"), "--repeat", "1", "--no-build") == 2
    err = capsys.readouterr().err
    assert f"host h2: {tmp_path} is at revision" in err and 'use deploy = "rsync"' in err
    # This checkout, seen from h2 (the namespaces share the files): the same revision.
    (tmp_path / "hosts.toml").write_text(f'ssh_config = "{bed.ssh_config}"\n[hosts.h2]\n'
                                         f'dir = "{REPO_ROOT}"\ndeploy = "same"\n')
    assert run_cli("run", "socket", "--target", "fake", "-p", "placement=remote", "-p", "size=10", "--hosts",
                   str(tmp_path / "hosts.toml"), "--repeat", "1", "--warmup", "0", "--no-build") == 0
    run, _, _ = only_run(fake_targets)
    assert any(n.startswith(f"deployed h2: same revision {sysinfo.git_revision()[:12]}") for n in run["notes"])
    assert settled(bed) == {}


def nats_ready() -> targets.Target:
    if not shutil.which("nats-server") or not shutil.which("go"):
        pytest.skip("the nats target needs go and nats-server")
    t = targets.target("nats")
    targets.build(t)
    return t


PUBSUB = ["run", "pubsub", "--target", "nats", "-p", "payload_bytes=64", "-p", "batching_bytes=8192",
          "--place", "broker=h1,sources=h2,receivers=h3", "--no-build", "--no-probe"]


@needs_bed
def test_pubsub_broker_sources_and_receivers_on_three_hosts(bed, tmp_path, monkeypatch):
    nats_ready()
    monkeypatch.setenv("MSGBENCH_STORE", str(tmp_path / "store.sqlite"))
    assert run_cli(*PUBSUB, "-p", "duration_s=0.5", "--hosts", str(bed.inventory), "--repeat", "1",
                   "--warmup", "0") == 0
    run, measurements, _ = only_run(tmp_path / "store.sqlite")
    (m,) = measurements
    assert m["status"] == "ok", m["error"]
    assert m["verify"]["received"] == m["verify"]["published"] > 0
    assert m["metrics"]["broker_cpu_ms"] > 0  # sampled on h1 around the measurement
    # The sources ran on h2: their CPU and memory are remote.py's report from there.
    assert m["worker"]["host"] == "h2" and m["worker"]["cpu_s"] > 0 and m["worker"]["max_rss_bytes"] > 0
    reports = [line for line in m["stderr_tail"].splitlines() if line.startswith("msgbench-remote {")]
    assert len(reports) == 2  # the receivers' (h3, relayed by the sources) and the sources' own
    assert f"service nats on nats://{bed.hosts['h1']}:" in " ".join(run["notes"])
    assert set(run["metadata"]["hosts"]) == {"h1", "h2", "h3"}
    from msgbench.data.store import Store

    store = Store(tmp_path / "store.sqlite")
    log = store.logs(run["id"])["nats"]
    assert f"Listening for client connections on {bed.hosts['h1']}" in log
    assert '"why": "stopped"' in log  # the broker was stopped in order on h1, its CPU reported
    assert settled(bed) == {}


@needs_bed
def test_killing_a_remote_receiver_or_the_harness_leaves_nothing_on_any_host(bed, tmp_path):
    nats_ready()
    env = os.environ | {"MSGBENCH_STORE": str(tmp_path / "store.sqlite"), "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "msgbench", *PUBSUB, "-p", "duration_s=6", "-p", "rate=200",
               "--hosts", str(bed.inventory), "--repeat", "1", "--warmup", "0", "--timeout", "120"]

    def start_and_wait_for_receivers(log):
        harness = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 90
        while True:
            receivers = [pid for pid, cmd in bed.commands("h3").items()
                         if cmd.startswith("bin/msgbench-nats --serve")]
            if receivers:
                return harness, receivers[0]
            assert harness.poll() is None, Path(log.name).read_text()
            assert time.monotonic() < deadline, "the receivers never started on h3"
            time.sleep(0.1)

    with open(tmp_path / "first.log", "wb") as log:
        harness, receiver = start_and_wait_for_receivers(log)
        os.kill(receiver, signal.SIGKILL)
        assert harness.wait(timeout=120) == 1
    _, (m,), _ = only_run(tmp_path / "store.sqlite")
    assert m["status"] != "ok"
    assert m["error"].startswith(f"on host h2 ({bed.hosts['h2']}): ") and "the receivers" in m["error"], m["error"]
    assert settled(bed) == {}

    with open(tmp_path / "second.log", "wb") as log:
        harness, _ = start_and_wait_for_receivers(log)
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        left = control_dirs_of(harness.pid)
    assert left, "a harness killed with SIGKILL cleans nothing up: its control directory stays"
    assert settled(bed) == {}
    assert_swept_by_the_next_run(harness.pid)
    # Here too: the ssh masters and clients went with the harness.
    deadline = time.monotonic() + 15
    while processes_matching("ssh -F"):
        assert time.monotonic() < deadline, processes_matching("ssh -F")
        time.sleep(0.2)


CHAT = ["run", "chat", "--target", "go", "-p", "server=ws", "-p", "groups=4", "-p", "clients_per_group=3",
        "-p", "think_ms=50", "-p", "drain_timeout_s=10", "--place", "server=h1,clients=h2,h3", "--no-build",
        "--warmup", "0", "--no-probe"]


def chat_ready() -> None:
    ready_target("go")
    chat_server.build_load_generator()


@needs_bed
def test_chat_server_on_one_host_and_its_clients_on_two(bed, tmp_path, monkeypatch, capsys):
    chat_ready()
    monkeypatch.setenv("MSGBENCH_STORE", str(tmp_path / "store.sqlite"))
    assert run_cli(*CHAT, "-p", "duration_s=1", "--hosts", str(bed.inventory), "--repeat", "1") == 0
    run, (m,), _ = only_run(tmp_path / "store.sqlite")
    assert m["status"] == "ok", m["error"]
    assert m["verify"]["received"] == m["verify"]["sent"] > 0 and m["verify"]["users"] == 12
    assert m["metrics"]["connections_held_count"] == 12 and m["metrics"]["latency_p99_us"] > 0
    # Each process measured where it ran: the server on h1, a load generator with two
    # whole groups on each of h2 and h3.
    parts = {(p["role"], p["host"]): p for p in m["worker"]["parts"]}
    assert set(parts) == {("server", "h1"), ("clients", "h2"), ("clients", "h3")}
    assert parts["clients", "h2"]["groups"] == [0, 2] and parts["clients", "h3"]["groups"] == [2, 2]
    assert all(p["cpu_s"] > 0 and p["max_rss_bytes"] > 0 and p["exit_code"] == 0 for p in parts.values())
    assert m["worker"]["host"] == "h2,h3"
    assert any("server_rss_bytes" in s for s in m["series"])  # the lead read the server's stats
    for alias in ("h1", "h2", "h3"):
        assert f"--- {'server' if alias == 'h1' else 'clients'} on host {alias} ({bed.hosts[alias]}) ---" in (
            m["stderr_tail"])
    assert (bed.dir / "h2" / "kits/chatload/bin/msgbench-chatload").exists()  # deployed to the clients' hosts
    assert "role clients ran on h2 (" in " ".join(run["notes"])
    for alias, facts in run["metadata"]["hosts"].items():
        # On one machine the offset is ~0; what is checked is that it was measured.
        assert abs(facts["clock_offset_s"]) < 1 and 0 < facts["clock_uncertainty_s"] < 1, alias
    capsys.readouterr()
    assert run_cli("show", "latest") == 0
    assert "ms to this machine's" in capsys.readouterr().out
    assert settled(bed) == {}


@needs_bed
def test_killing_the_chat_server_or_the_harness_leaves_nothing_on_any_host(bed, tmp_path):
    chat_ready()
    env = os.environ | {"MSGBENCH_STORE": str(tmp_path / "store.sqlite"), "PYTHONPATH": str(REPO_ROOT)}
    command = [sys.executable, "-m", "msgbench", *CHAT, "-p", "duration_s=8", "--hosts", str(bed.inventory),
               "--repeat", "1", "--timeout", "180"]  # the chat server kind's floor is 139 s: a --timeout is not raised

    def start_and_wait_for(log, alias, program):
        harness = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
        deadline = time.monotonic() + 90
        while True:
            found = [pid for pid, cmd in bed.commands(alias).items() if cmd.startswith(program)]
            if found:
                return harness, found[0]
            assert harness.poll() is None, Path(log.name).read_text()
            assert time.monotonic() < deadline, f"{program} never started on {alias}"
            time.sleep(0.1)

    with open(tmp_path / "first.log", "wb") as log:
        harness, server = start_and_wait_for(log, "h1", "bin/msgbench-go --chat-server")
        time.sleep(1)  # connected and sending
        os.kill(server, signal.SIGKILL)
        assert harness.wait(timeout=120) == 1
    _, (m,), _ = only_run(tmp_path / "store.sqlite")
    assert m["status"] == "failed"
    assert m["error"].startswith(f"the chat server on host h1 ({bed.hosts['h1']}) died mid-run"), m["error"]
    assert settled(bed) == {}

    with open(tmp_path / "second.log", "wb") as log:
        harness, _ = start_and_wait_for(log, "h3", f"{bed.dir}/h3/kits/chatload/bin/msgbench-chatload")
        harness.send_signal(signal.SIGKILL)
        harness.wait()
        left = control_dirs_of(harness.pid)
    assert left, "a harness killed with SIGKILL cleans nothing up: its control directory stays"
    assert settled(bed) == {}
    deadline = time.monotonic() + 15
    while processes_matching("msgbench-chatload") or processes_matching("ssh -F"):
        assert time.monotonic() < deadline, processes_matching("msgbench-chatload") + processes_matching("ssh -F")
        time.sleep(0.2)
    assert_swept_by_the_next_run(harness.pid)
