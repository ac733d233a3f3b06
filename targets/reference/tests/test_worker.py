"""The reference worker through the real protocol, with the real tools on 127.0.0.1.

Each test runs `python3 worker.py` as the harness does (one request on stdin, JSON lines
on stdout, its own session so leftovers can be found), with MSGBENCH_PEER_COMMAND set to
target.toml's serve argv. Tests of a tool that is not installed are skipped.
"""

import ast
import dataclasses
import json
import os
import select
import shutil
import socket
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(FOLDER))
import params as reference_params  # noqa: E402
import worker  # noqa: E402

SPEC = FOLDER.parent.parent / "spec" / "workloads" / "socket.json"
TOML = tomllib.loads((FOLDER / "target.toml").read_text())
DEFAULTS = {"mode": "echo", "size": 1024, "total_bytes": 4194304, "sockets": 1, "data": "binary",
            "placement": "local", "check_content": 1, "port": 0}
TIME_LIMIT_S = 120

needs_iperf3 = pytest.mark.skipif(shutil.which("iperf3") is None, reason="iperf3 is not installed")
needs_sockperf = pytest.mark.skipif(shutil.which("sockperf") is None, reason="sockperf is not installed")
FLOW = {"mode": "flow"}


def peer_env() -> dict:
    return os.environ | {"MSGBENCH_PEER_COMMAND": json.dumps(TOML["serve"]), "MSGBENCH_PEER_CWD": str(FOLDER),
                         "MSGBENCH_PEER_HOST": "127.0.0.1"}


def no_peer_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith("MSGBENCH_PEER_")}


def group_gone(pgid: int, within_s: float = 5) -> bool:
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def call(variant: str, params: dict, workload: str = "socket", env: dict | None = None) -> dict:
    """One worker, as the harness runs it: the hello, then the one line that answers."""
    options = TOML["variants"][variant]["options"] if variant in TOML["variants"] else {}
    request = {"workload": workload, "variant": variant, "options": options, "params": DEFAULTS | params,
               "repetition": 1}
    proc = subprocess.Popen(TOML["run"], cwd=FOLDER, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=peer_env() if env is None else env,
                            start_new_session=True)
    try:
        stdout, stderr = proc.communicate(json.dumps(request) + "\n", timeout=TIME_LIMIT_S)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()
    assert proc.returncode == 0, stderr
    assert group_gone(proc.pid), "a process of the worker outlived it"
    lines = [json.loads(line) for line in stdout.splitlines()]
    assert [line["type"] for line in lines[:1]] == ["hello"], stdout
    assert lines[0]["target"] == "reference" and lines[0]["variant"] == variant and lines[0]["runtime_version"]
    assert len(lines) == 2 and lines[1]["type"] in ("result", "error"), stdout + stderr
    return lines[1]


def assert_result(answer: dict, exact: bool = True) -> dict:
    """A result of the spec's raw facts: an elapsed time per socket, the wall time, the peak RSS."""
    assert answer["type"] == "result" and "metrics" not in answer, answer
    measured, verify = answer["measured"], answer["verify"]
    assert set(measured) == {"elapsed_ns", "wall_ns", "peak_rss_bytes"}, measured
    assert measured["elapsed_ns"] and all(isinstance(ns, int) and 0 < ns <= measured["wall_ns"]
                                          for ns in measured["elapsed_ns"]), measured
    assert isinstance(measured["peak_rss_bytes"], int) and measured["peak_rss_bytes"] > 0
    assert verify["messages_sent"] > 0 and verify["content_mismatches"] == 0
    if exact:
        assert verify["messages_received"] == verify["messages_sent"], verify
        assert verify["bytes_received"] == verify["bytes_sent"], verify
    return answer


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# ---------------------------------------------------------------- without the tools


def test_params_are_the_spec_s():
    spec = json.loads(SPEC.read_text())["params"]
    assert set(spec) == {field.name for field in dataclasses.fields(worker.Params)}
    # rate is omitted from a request at its default (omit_at_default), as DEFAULTS, the
    # request's params, omit it; the worker reads it as 0.
    assert {name: body["default"] for name, body in spec.items()} == DEFAULTS | {"rate": 0}
    assert spec["rate"]["omit_at_default"] and worker.read_params(worker.Params, DEFAULTS).rate == 0


def test_socket_variants_name_their_tool():
    assert {v: TOML["variants"][v]["options"] for v in worker.TOOL_MODE} == {v: {"tool": v} for v in worker.TOOL_MODE}


def test_version_names_both_tools():
    out = subprocess.run(TOML["version"], cwd=FOLDER, capture_output=True, text=True, timeout=30, check=True).stdout
    assert "iperf" in out and "sockperf" in out and len(out.strip().splitlines()) == 1


def test_a_missing_param_is_internal():
    request = {"workload": "socket", "variant": "iperf3", "options": {"tool": "iperf3"}, "params": {"mode": "flow"},
               "repetition": 1}
    out = subprocess.run(TOML["run"], cwd=FOLDER, input=json.dumps(request), capture_output=True, text=True,
                         timeout=30, check=True).stdout
    answer = json.loads(out.splitlines()[-1])
    assert answer["kind"] == "internal" and "params.size is absent" in answer["message"], answer


@pytest.mark.parametrize("options, named", [({}, "option tool"), ({"tool": "nats_bench"}, "option tool"),
                                            ({"tool": "iperf3", "streams": 2}, "unknown option streams")])
def test_options_name_a_known_tool_and_nothing_else(options, named):
    request = {"workload": "socket", "options": options, "params": DEFAULTS | FLOW}
    with pytest.raises(worker.Failure) as caught:
        worker.handle(request)
    assert caught.value.kind == "internal" and named in caught.value.message


@pytest.mark.parametrize("variant, params, named", [
    ("iperf3", {"mode": "echo"}, "echo"),
    ("sockperf", {"mode": "flow"}, "flow"),
    ("iperf3", {"mode": "flow", "data": "list"}, "list"),
    ("sockperf", {"size": 9}, "size"),
    ("sockperf", {"size": 1048572}, "size"),
    ("iperf3", {"mode": "flow", "size": 1048577}, "size"),
    ("sockperf", {"sockets": 2, "port": 65535}, "port"),
    ("sockperf", {"rate": 5000}, "rate = 5000"),
])
def test_what_a_tool_cannot_do_is_unsupported(variant, params, named):
    answer = call(variant, params)
    assert answer["kind"] == "unsupported" and named in answer["message"], answer


def test_unknown_workload_is_unsupported():
    answer = call("iperf3", {}, workload="ring")
    assert answer["kind"] == "unsupported" and "ring" in answer["message"]


def test_remote_placement_needs_the_harness():
    answer = call("iperf3", FLOW | {"placement": "remote"}, env=no_peer_env())
    assert answer["kind"] == "unsupported" and "MSGBENCH_PEER_COMMAND" in answer["message"]


def test_sockperf_summary_is_parsed():
    text = ("sockperf: [Total Run] RunTime=2.001 sec; Warm up time=400 msec; SentMessages=30937; "
            "ReceivedMessages=30936\nsockperf: [Valid Duration] RunTime=1.550 sec; SentMessages=21170; "
            "ReceivedMessages=21170\nsockperf: \x1b[2;35m====> avg-rtt=73.173 (std-dev=62.701)\x1b[0m\n")
    assert worker.parse_sockperf(text) == worker.PingPong(2.001, 30937, 30936, 1.55, 21170, 73.173)
    with pytest.raises(worker.Failure):
        worker.parse_sockperf("sockperf: No valid observations found.")


def test_flow_result_takes_times_and_counts_from_the_tools():
    p = worker.read_params(worker.Params, DEFAULTS | {"mode": "flow", "size": 1000, "total_bytes": 4000,
                                                      "sockets": 2})
    report = {"end": {"sum_received": {"bytes": 8000, "seconds": 0.5},
                      "streams": [{"receiver": {"seconds": 0.5}}, {"receiver": {"seconds": 0.25}}]}}
    result = worker.flow_result(p, report, {"messages": 8, "bytes": 8000}, 4096)
    assert result["measured"] == {"elapsed_ns": [500_000_000, 250_000_000], "wall_ns": 500_000_000,
                                  "peak_rss_bytes": 4096}
    assert result["verify"]["messages_received"] == 8 and result["verify"]["bytes_sent"] == 8000


def test_echo_result_takes_each_client_s_valid_duration():
    # sockperf's own summary: its first 400 ms, just after its 2 s idle sleep, are left out.
    p = worker.read_params(worker.Params, DEFAULTS | {"size": 16})
    runs = [worker.PingPong(2.0, 101, 100, 1.5, 80, 70.0), worker.PingPong(1.5, 81, 80, 1.25, 60, 90.0)]
    result = worker.echo_result(p, runs, 10)
    assert result["measured"] == {"elapsed_ns": [1_500_000_000, 1_250_000_000], "wall_ns": 1_500_000_000,
                                  "peak_rss_bytes": 10}
    verify = result["verify"]
    assert verify["messages_received"] == verify["messages_sent"] == 140 and verify["bytes_received"] == 140 * 16
    assert verify["tool_total_sent"] == 182 and verify["tool_total_received"] == 180
    assert verify["tool_total_ns"] == 3_500_000_000 and verify["tool_round_trip_ns"] == 80_000
    # The worker protocol takes integers, strings and booleans in verify (spec/message.schema.json).
    assert all(isinstance(v, int | str | bool) for v in verify.values())


def test_sockperf_sends_as_many_bytes_per_message_as_a_worker_s_frame():
    p = worker.read_params(worker.Params, DEFAULTS | {"size": 65536, "total_bytes": 65536})
    client = worker.sockperf_client_argv("127.0.0.1", 5000, p)
    assert client[client.index("-m") + 1] == "65540"  # 4-byte length + 65,536 bytes, as the workers send
    server = worker.sockperf_server_argv(5000, p)
    assert server[server.index("-m") + 1] == "65540", "the server accepts messages that large"
    small = worker.read_params(worker.Params, DEFAULTS | {"size": 10, "total_bytes": 1024})
    assert worker.sockperf_client_argv("127.0.0.1", 5000, small)[-4] == "14"  # sockperf's smallest message
    assert "-m" not in worker.sockperf_server_argv(5000, small)


# ---------------------------------------------------------------- iperf3


@needs_iperf3
def test_iperf3_flow_one_socket_is_exact():
    answer = assert_result(call("iperf3", FLOW | {"size": 1024, "total_bytes": 1048576, "sockets": 1}))
    verify = answer["verify"]
    assert verify["bytes_received"] == verify["bytes_sent"] == 1048576, verify
    assert answer["measured"]["peak_rss_bytes"] < 64 * 2**20, "the tool's RSS, not the Python worker's"


def test_iperf3_parallel_streams_are_unsupported():
    # -P streams over- or under-shoot the sequence (README.md): their counts cannot be verified.
    answer = call("iperf3", FLOW | {"size": 1024, "total_bytes": 1048576, "sockets": 4})
    assert answer["kind"] == "unsupported" and "sockets = 4" in answer["message"]


@needs_iperf3
def test_iperf3_flow_on_a_fixed_port():
    assert_result(call("iperf3", FLOW | {"size": 4096, "total_bytes": 65536, "port": free_port()}))


@needs_iperf3
def test_iperf3_flow_without_the_harness_starts_its_own_server():
    assert_result(call("iperf3", FLOW | {"size": 1024, "total_bytes": 65536}, env=no_peer_env()))


@needs_iperf3
def test_a_fixed_port_in_use_is_a_resource_error():
    with socket.create_server(("0.0.0.0", 0)) as busy:
        port = busy.getsockname()[1]
        answer = call("iperf3", FLOW | {"size": 1024, "total_bytes": 65536, "port": port})
    assert answer["kind"] == "resource" and str(port) in answer["message"], answer


@pytest.mark.parametrize("options, named", [({"tool": "sockperf", "pin": "core"}, "option pin"),
                                            ({"tool": "iperf3", "pin": "pair"}, "tool sockperf only")])
def test_pin_is_pair_or_none_and_for_sockperf(options, named):
    with pytest.raises(worker.Failure) as caught:
        worker.handle({"workload": "socket", "options": options, "params": DEFAULTS})
    assert caught.value.kind == "internal" and named in caught.value.message


def test_pair_k_runs_on_the_cpu_c_tuned_gives_its_pair():
    allowed = sorted(os.sched_getaffinity(0))
    assert [worker.pair_cpu(k) for k in range(2 * len(allowed))] == allowed * 2  # targets/c/src/socket_pin.c's rule
    assert worker.pinned(["sockperf", "server"], 1) == ["taskset", "-c", "1", "sockperf", "server"]
    assert worker.pinned(["sockperf", "server"], None) == ["sockperf", "server"]


# ---------------------------------------------------------------- sockperf


@needs_sockperf
@pytest.mark.parametrize("sockets", [1, 2])
def test_sockperf_echo(sockets):
    answer = assert_result(call("sockperf", {"size": 16, "total_bytes": 16384, "sockets": sockets}))
    elapsed_ns = answer["measured"]["elapsed_ns"]
    assert len(elapsed_ns) == sockets and 1_000_000_000 < min(elapsed_ns) < 2_000_000_000, \
        "the valid duration of a 2 s run"


@needs_sockperf
def test_sockperf_pinned_echo():
    answer = assert_result(call("sockperf_pinned", {"size": 16, "total_bytes": 16384, "sockets": 2}))
    assert len(answer["measured"]["elapsed_ns"]) == 2


# ---------------------------------------------------------------- the server half


def read_line(proc: subprocess.Popen, within_s: float) -> dict:
    ready, _, _ = select.select([proc.stdout], [], [], within_s)
    assert ready, f"no line within {within_s} s"
    return json.loads(proc.stdout.readline())


@pytest.mark.parametrize("variant, mode", [
    pytest.param("iperf3", "flow", marks=needs_iperf3),
    pytest.param("sockperf", "echo", marks=needs_sockperf),
])
def test_server_exits_with_its_tools_when_stdin_closes(variant, mode):
    proc = subprocess.Popen(TOML["serve"], cwd=FOLDER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        sockets = 1 if variant == "iperf3" else 2  # iperf3 is the reference for one socket only
        request = {"workload": "socket", "variant": variant, "options": {"tool": variant},
                   "params": DEFAULTS | {"mode": mode, "sockets": sockets}, "repetition": 1}
        proc.stdin.write(json.dumps(request) + "\n")
        proc.stdin.flush()
        listening = read_line(proc, 30)
        assert listening["type"] == "listening" and listening["port"] > 0
        assert set(listening["ports"]) <= worker.listening_ports()
        proc.stdin.close()
        assert proc.wait(timeout=15) == 0
        assert not set(listening["ports"]) & worker.listening_ports()
        assert group_gone(proc.pid), "the tool's server outlived the server half"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.wait()


def test_the_time_limit_is_the_specs_own():
    """The tools' limits derive from spec/workloads/socket.json's time_limit_s (make build copies it):
    a change there reaches the worker with no edit here."""
    spec = json.loads((FOLDER.parent.parent / "spec" / "workloads" / "socket.json").read_text())
    assert json.loads((FOLDER / "spec" / "socket.json").read_text()) == spec, "run make build: the copy is stale"
    params = {"total_bytes": 100_000_000, "size": 1000, "sockets": 4}
    p = worker.Params(mode="flow", data="binary", placement="local", check_content=0, port=0, **params)
    assert p.time_limit_s == 140.0  # 60 + 1e8 / 1000 * 4 / 1e4 + 1e8 * 4 / 1e7
    paced = worker.Params(mode="echo", data="binary", placement="local", check_content=0, port=0,
                          rate=4000, **params)
    assert paced.time_limit_s == 240.0  # and the open loop's 1e5 * 4 messages / 4000 per s
    with pytest.raises(worker.Failure, match="is not arithmetic over the params"):
        reference_params._arithmetic(ast.parse("size if sockets else 1", mode="eval").body, params)
