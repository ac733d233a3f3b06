"""The chat server kind (chat server=ws, docs/chat-server.md) in the harness: the real
load generator (kits/chatload) against the fake target's tiny WebSocket server, which
serves correctly, dies mid-run or cannot be reached; runs that will not fit are refused
before anything starts; nothing is left running."""

import dataclasses
import re
import resource
import types

import pytest

from msgbench.cli import main
from msgbench.core import spec
from msgbench.data import results
from msgbench.data.store import Store
from msgbench.running import workloads as workload_runs
from msgbench.workers import chat_server, targets
from tests.conftest import processes_matching

# Stress paced by a 1 ms listen after each send: the fake server is Python, and an
# unpaced flood can outlast any drain timeout on a loaded machine.
SMALL = ["-p", "server=ws", "-p", "groups=2", "-p", "clients_per_group=3", "-p", "duration_s=0.5",
         "-p", "listener_delay_ms=1", "-p", "drain_timeout_s=20", "--repeat", "1", "--warmup", "0", "--no-build"]


@pytest.fixture(scope="module", autouse=True)
def load_generator():
    chat_server.build_load_generator()


def measurements(store_path):
    store = Store(store_path)
    run_id = store.resolve("latest")
    return store.measurements(run_id), results.run_document(store, [run_id])


def nothing_left():
    assert not processes_matching("chat_server.py"), "the chat server outlived its measurement"
    assert not processes_matching("msgbench-chatload"), "the load generator outlived its measurement"


def test_a_working_server_is_measured_verified_and_sampled(fake_targets, capsys):
    assert main(["run", "chat", "--target", "fake", "--variant", "chat_ok", *SMALL]) == 0
    (m,), _ = measurements(fake_targets)
    assert m["status"] == "ok", m["error"]
    assert m["verify"]["users"] == 6 and m["verify"]["sent"] == m["verify"]["received"] > 0
    metrics = m["metrics"]
    assert metrics["connections_opened_count"] == 6
    assert metrics["connections_held_count"] == 6
    assert metrics["memory_per_connection_bytes"] == pytest.approx(
        (metrics["peak_rss_bytes"] - m["worker"]["measured"]["server_baseline_rss_bytes"]) / 6)
    assert metrics["server_cpu_percent"] > 0 and metrics["loadgen_cpu_percent"] > 0
    assert "runtime_memory_bytes" not in metrics  # the fake server reports no runtime total
    assert m["runtime_version"].startswith("Python")  # the server's runtime, not the load generator's
    names = set().union(*m["series"])
    assert {"server_rss_bytes", "server_threads_count", "loadgen_cpu_ns", "loadgen_rss_bytes"} <= names
    assert m["series"][0]["t_ms"] < 500 and len(m["series"]) >= 2
    capsys.readouterr()
    assert main(["show", "latest", "--format", "seed"]) == 0  # the seed's block, as for the in-process kinds
    block = capsys.readouterr().out
    assert "[fake/chat_ok server=ws repetition 1]\nG:2     CPG:3" in block and f"Sent: {m['verify']['sent']}" in block
    nothing_left()


def test_a_server_that_dies_mid_run_fails_the_measurement_naming_it(fake_targets):
    assert main(["run", "chat", "--target", "fake", "--variant", "chat_dies", *SMALL]) == 1
    (m,), _ = measurements(fake_targets)
    assert m["status"] == "error"
    assert "the chat server" in m["error"] and "chat_server.py" in m["error"]
    assert "died mid-run" in m["error"] and "exit status 3" in m["error"]
    nothing_left()


def test_a_server_that_cannot_be_reached_fails_clearly(fake_targets):
    assert main(["run", "chat", "--target", "fake", "--variant", "chat_unreachable", *SMALL]) == 1
    (m,), _ = measurements(fake_targets)
    assert m["status"] == "error"
    assert "cannot reach the chat server at ws://127.0.0.1:" in m["error"]
    assert "connection refused" in m["error"]
    nothing_left()


@pytest.mark.parametrize(("groups", "per_group", "said"), [
    (1100, 1000, "file descriptors"),  # 1.1 million: past fs.nr_open (and any hard limit)
    (200, 10, "GiB"),  # 2,000 x (100 MB + the load generator's) bytes: past this machine's memory
])
def test_too_many_users_are_refused_before_launch(fake_targets, capsys, groups, per_group, said):
    code = main(["run", "chat", "--target", "fake", "--variant", "chat_ok", "-p", "server=ws",
                 "-p", f"groups={groups}", "-p", f"clients_per_group={per_group}", "--no-build"])
    assert code == 2
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert f"{groups * per_group:,} users" in line and said in line and "fit" in line
    assert not fake_targets.exists() or not Store(fake_targets).runs(), "a refused run started"
    nothing_left()


def test_a_target_without_a_chat_server_is_refused_when_named(fake_targets, capsys, monkeypatch):
    without = dataclasses.replace(targets.target("fake"), extra={})
    monkeypatch.setitem(targets.registry(), "fake", without)  # the registry is cached: this is what runs see
    assert main(["run", "chat", "--target", "fake", *SMALL]) == 2
    assert "declares no chat server" in capsys.readouterr().err


def test_the_fd_limit_is_raised_for_a_server_run_and_restored():
    def job(**params):
        return types.SimpleNamespace(scenario=types.SimpleNamespace(workload="chat"), params=params)

    before = resource.getrlimit(resource.RLIMIT_NOFILE)
    with chat_server.raised_fd_limit([job(server="none", groups=9, clients_per_group=9)]):
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == before  # no server job: untouched
    with chat_server.raised_fd_limit([job(server="ws", groups=100, clients_per_group=100)]):
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        assert soft == hard >= min(10_000 + chat_server.FD_SLACK, chat_server.fd_ceiling()[0])
    assert resource.getrlimit(resource.RLIMIT_NOFILE) == before


def test_in_process_workers_are_not_sent_server_none(fake_targets):
    params = spec.resolve_params(spec.workload("chat"), {})
    assert params["server"] == "none"
    t = targets.target("fake")
    v = t.variants["chat_ok"]
    assert "server" not in t.request("chat", v, params, 1, False)["params"]
    assert t.request("chat", v, params | {"server": "ws"}, 1, False)["params"]["server"] == "ws"


def test_server_only_facts_are_required_of_the_server_kind_alone():
    wl = spec.workload("chat")
    none = spec.resolve_params(wl, {})
    ws = none | {"server": "ws"}
    facts = {name: 1 for name in wl.measured if not name.startswith(("server_", "loadgen_", "connect"))}
    histograms = {"latency_ns": [[1, 1]]}
    assert spec.measured_problems(wl, facts, histograms, none) == []
    missing = spec.measured_problems(wl, facts, histograms, ws)
    assert "measured server_cpu_ns missing" in missing and "histogram connect_ns missing" in missing
    # runtime_memory_bytes: the in-process kinds must report it; a server may not have one
    del facts["runtime_memory_bytes"]
    assert spec.measured_problems(wl, facts, histograms, none) == ["measured runtime_memory_bytes missing"]
    assert "measured runtime_memory_bytes missing" not in spec.measured_problems(wl, facts, histograms, ws)


def test_chat_server_variants_must_name_variants_that_run_chat(tmp_path):
    """The chat plug-in owns its target.toml keys and checks them (the registry keeps them as written)."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "target.toml").write_text(
        'name = "t"\nrun = ["x"]\nchat_server = ["x", "--chat-server"]\nchat_server_variants = ["a", "nope"]\n'
        'chat_srever = ["typo"]\n[variants.a]\nlabel = "idiomatic"\nworkloads = ["chat"]\n')
    t = targets.load_target(folder)
    assert t.extra["chat_server_variants"] == ["a", "nope"]
    unknown, wrong = workload_runs.target_problems(t)
    assert "unknown key 'chat_srever'" in unknown and "chat_server_variants" in unknown
    assert re.search(r"chat_server_variants \['a', 'nope'\] must name variants that run chat \(a\)", wrong)
    assert [v.name for v in chat_server.serving_variants(t)] == ["a"]  # what a run uses of it
    fixed = dataclasses.replace(t, extra={k: v for k, v in t.extra.items() if k != "chat_srever"} |
                                {"chat_server_variants": ["a"]})
    assert workload_runs.target_problems(fixed) == []
    # Another checkout's target.toml (an old build, builds.py) may hold keys this registry dropped.
    old = dataclasses.replace(fixed, extra=fixed.extra | {"test": "make test"},
                              build_of=targets.Build(label="old", checkout="/elsewhere"))
    assert workload_runs.target_problems(old) == []
    assert workload_runs.target_problems(dataclasses.replace(old, build_of=None)) != []


def test_a_target_with_a_bad_plug_in_key_is_refused_when_named(fake_targets, monkeypatch, capsys):
    bad = dataclasses.replace(targets.target("fake"), extra=targets.target("fake").extra | {"chat_srever": ["x"]})
    monkeypatch.setitem(targets.registry(), "fake", bad)
    assert main(["run", "chat", "--target", "fake", *SMALL]) == 2
    assert "unknown key 'chat_srever'" in capsys.readouterr().err


def test_a_target_without_a_chat_server_gets_an_n_a_row_in_a_suite(fake_targets, monkeypatch):
    from msgbench.running import suites
    from msgbench.running.runner import plan_run

    fake = targets.target("fake")
    monkeypatch.setitem(targets.registry(), "noserver", dataclasses.replace(fake, name="noserver", extra={}))
    scenario = suites.Scenario("chat-server", "chat", {"server": "ws", "groups": 2, "clients_per_group": 3,
                                                       "duration_s": 0.5}, targets=("fake", "noserver"))
    plan = plan_run([scenario], None, None, 1, 0, None, strict_targets=False)  # the server kind needs its 151 s
    assert {j.target.name for j in plan.jobs} == {"fake"}
    [(_, _, _, target, variant, why)] = plan.skipped_points  # stored as an n/a row: it does not vanish
    assert target.name == "noserver" and variant.name == fake.default_variant and "declares no chat server" in why
