import json

import pytest

from msgbench.core import spec
from msgbench.core.paths import SPEC_DIR


def ring():
    return spec.workload("ring")


def test_defaults_filled_in():
    params = spec.resolve_params(ring(), {"n": 5000})
    assert params == {"n": 5000, "m": 10, "payload": "BOO!"}


@pytest.mark.parametrize("value", [0, 1, -5])
def test_ring_too_small_names_value_and_range(value):
    with pytest.raises(spec.ParamError) as exc:
        spec.resolve_params(ring(), {"n": value})
    assert f"n = {value}" in str(exc.value)
    assert "from 2 to 134,217,727" in str(exc.value)


def test_not_an_integer():
    definition = ring().params["n"]
    with pytest.raises(spec.ParamError, match="n = 'abc' is not an integer"):
        spec.coerce("n", definition, "abc")
    with pytest.raises(spec.ParamError, match="not an integer"):
        spec.coerce("n", definition, "2.5")
    assert spec.coerce("n", definition, "1e5") == 100000
    assert spec.coerce("n", definition, "100_000") == 100000
    assert spec.coerce("n", definition, "100,000") == 100000


def test_a_comma_list_is_not_read_as_one_number():
    # senders=1,2 once ran senders = 12 without a word (issue 29); a list is a sweep.
    definition = ring().params["n"]
    with pytest.raises(spec.ParamError, match=r"n = '1,2' is not an integer.*--sweep n=1,2"):
        spec.coerce("n", definition, "1,2")
    with pytest.raises(spec.ParamError, match="--sweep n=1000,5000"):
        spec.coerce("n", definition, "1000,5000")


def test_booleans_are_not_numbers():
    with pytest.raises(spec.ParamError):
        spec.resolve_params(ring(), {"n": True})


def test_unknown_parameter_lists_the_known_ones():
    with pytest.raises(spec.ParamError, match=r"unknown parameter 'laps'.*n, m, payload"):
        spec.resolve_params(ring(), {"laps": 3})


def test_unknown_workload():
    with pytest.raises(spec.ParamError, match="unknown workload 'rong'"):
        spec.workload("rong")


def test_verify_rules_report_the_numbers():
    params = {"n": 10, "m": 3, "payload": "x"}
    assert spec.failed_rules(ring(), params, {"hops": 30, "laps": 3, "links": 10}) == []
    failures = spec.failed_rules(ring(), params, {"hops": 29, "laps": 3, "links": 10})
    assert failures == ["hops == n * m does not hold (hops=29, m=3, n=10)"]
    missing = spec.failed_rules(ring(), params, {"laps": 3, "links": 10})
    assert "did not report hops" in missing[0]


def test_message_schema_checks_each_kind():
    assert spec.message_problem({"type": "hello", "target": "go", "runtime_version": "1", "variant": "d"}) is None
    assert "runtime_version" in spec.message_problem({"type": "hello", "target": "go", "variant": "d"})
    assert "not one of" in spec.message_problem({"type": "goodbye"})
    assert spec.message_problem({"type": "result", "metrics": {"x_ms": "fast"}, "verify": {}})
    assert spec.message_problem({"type": "error", "kind": "unsupported", "message": "n = 1"}) is None
    assert spec.message_problem({"type": "error", "kind": "bad_params", "message": "n = 1"}) is not None
    assert spec.message_problem({"type": "error", "kind": "oops", "message": "n = 1"})
    assert spec.message_problem([1, 2])


def test_every_workload_spec_is_complete():
    for path in (SPEC_DIR / "workloads").glob("*.json"):
        raw = json.loads(path.read_text())
        wl = spec.workload(raw["workload"])
        assert wl.primary_metric in wl.metrics, path
        if wl.primary_by:  # a judged metric per value of one of its params: each a metric, each a value
            assert wl.primary_by["param"] in wl.params, path
            assert set(wl.primary_by["metrics"].values()) <= set(wl.metrics), path
        for name in wl.metrics:
            units = ("_ms", "_us", "_per_s", "_bytes", "_count", "_ratio", "_percent")
            assert name.endswith(units), f"{path}: {name} has no unit"
        for name, definition in wl.params.items():
            spec.check_param(name, definition, definition["default"])
        for rule in wl.verify_rules:
            assert rule["rule"] and rule["description"]


def test_the_judged_metric_follows_the_param_primary_by_names():
    socket = spec.workload("socket")
    assert socket.judged_metric({"mode": "echo"}) == "round_trip_us"
    assert socket.judged_metric({"mode": "flow"}) == "bandwidth_bytes_per_s"
    # open loop is judged by its tail at the offered rate, not by a round trip the rate sets
    assert socket.judged_metric({"mode": "echo", "rate": 5000}) == "latency_p99_us"
    assert spec.workload("ring").judged_metric({"mode": "echo"}) == spec.workload("ring").primary_metric


def test_an_open_loop_socket_echo_must_time_every_round_trip():
    socket = spec.workload("socket")
    params = socket.defaults() | {"rate": 1000}
    counts = {"messages_sent": 4, "messages_received": 4, "bytes_sent": 4096, "bytes_received": 4096,
              "content_mismatches": 0}
    timed_all = {"latency_ns": [[100, 3], [200, 1]]}
    assert spec.failed_rules(socket, params, counts, timed_all) == []
    timed_three = {"latency_ns": [[100, 3]]}
    assert spec.failed_rules(socket, params, counts, timed_three) == [
        "hist_count(latency_ns) == messages_received does not hold "
        "(latency_ns=histogram of 3, messages_received=4)"]
    # the closed loop has no histogram and no such rule
    assert spec.failed_rules(socket, socket.defaults(), counts) == []
