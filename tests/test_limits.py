"""The machine's limits: parsing what the C program prints, keeping it with a run through
export and import, and the report's rows of ceilings against it. Nothing here asserts a
speed: only that the figures are there, consistent with their counts, and carried."""

import json

import pytest

from msgbench import cli
from msgbench.data.store import Store
from msgbench.running import limits
from msgbench.views.report import html
from msgbench.views.report import limits as report_limits

# One `msgbench limits` at a time per machine (a machine-wide lock), and it measures the
# machine: alone, after the parallel tests (make test-harness).
pytestmark = pytest.mark.alone

GOOD = {
    "memcpy_bytes_per_s": 1e10, "memcpy_copies": 10, "memcpy_copy_bytes": 67108864,
    "pipe_round_trips_per_s": 100000, "pipe_round_trips": 50000, "pipe_seconds": 0.5,
    "pipe_cross_core_round_trips_per_s": 20000, "pipe_cross_core_round_trips": 10000,
    "pipe_cross_core_seconds": 0.5,
    "loopback_bytes_per_s": 2e9, "loopback_bytes": 1e9, "loopback_seconds": 0.5,
    "loopback_write_bytes": 1048576, "cores": 2,
}


def test_parse_takes_the_programs_line():
    assert limits.parse(json.dumps(GOOD) + "\n") == GOOD


@pytest.mark.parametrize("text, problem", [
    ("", "printed 0 lines"),
    ("{} \n{}", "printed 2 lines"),
    ("memcpy 10 GB/s", "not JSON"),
    ("[1, 2]", "expected a JSON object"),
    (json.dumps(GOOD | {"loopback_bytes_per_s": 0}), "loopback_bytes_per_s = 0: expected a number above 0"),
    (json.dumps(GOOD | {"cores": True}), "cores = True"),
    (json.dumps({k: v for k, v in GOOD.items() if k != "pipe_round_trips"}), "pipe_round_trips = None"),
    (json.dumps(GOOD | {"pipe_round_trips_per_s": 5}), "is not pipe_round_trips / pipe_seconds"),
])
def test_parse_names_what_is_wrong(text, problem):
    with pytest.raises(limits.LimitsError, match=problem):
        limits.parse(text)


def _summary(target, workload, params, metric, median):
    return {"scenario": workload, "workload": workload, "target": target, "build": "", "variant": "default",
            "variant_label": "idiomatic", "params": params, "sweep": None, "x": None, "status": "ok",
            "ok": 3, "total": 3, "metrics": {metric: {"median": median}}}


def test_rows_set_each_ceiling_against_its_limit():
    doc = {"runs": [{"id": "r1", "metadata": {"limits": GOOD | {"command": "msgbench-limits 0.5"}}, "summary": [
        _summary("c", "socket", {"mode": "flow", "size": 65536}, "bandwidth_bytes_per_s", 1e9),
        _summary("c", "socket", {"mode": "echo", "size": 16}, "bandwidth_bytes_per_s", 1e6),  # no ceiling
        _summary("tcp", "pubsub", {"payload_bytes": 8192, "receivers": 2}, "msgs_per_s", 61035.15625),
        _summary("c", "fanin", {"senders": 4}, "receive_throughput_per_s", 1e6),
        _summary("go", "pubsub", {"payload_bytes": 8192}, "msgs_per_s", 1e5),  # no ceiling
    ]}]}
    rows = {r["ceiling"]: r for r in report_limits.rows(doc)}
    assert sorted(rows) == ["C fanin receive rate", "C socket flow bandwidth",
                            "tcp pubsub payload bytes delivered (all receivers)"]
    assert rows["C socket flow bandwidth"]["fraction"] == pytest.approx(0.5)
    # two receivers of 61035 msgs/s x 8 KiB: 1e9 bytes/s on loopback
    assert rows["tcp pubsub payload bytes delivered (all receivers)"]["fraction"] == pytest.approx(0.5)
    assert rows["C fanin receive rate"]["fraction"] == pytest.approx(5.0)  # 2 hand-offs per round trip
    assert {r["command"] for r in rows.values()} == {"msgbench-limits 0.5"}


def test_fractions_read_as_people_say_them():
    assert [report_limits.fraction_text(f) for f in (0.62, 1.234, 65.3)] == ["62%", "123%", "65x"]


def test_no_limits_no_section():
    doc = {"runs": [{"id": "r1", "metadata": {}, "summary": [
        _summary("c", "socket", {"mode": "flow"}, "bandwidth_bytes_per_s", 1e9)]}]}
    assert report_limits.rows(doc) == []
    assert report_limits.section(doc) is None


def test_measured_limits_are_stored_exported_imported_and_reported(tmp_path, capsys):
    store_path = tmp_path / "store.sqlite"
    assert cli.main(["--store", str(store_path), "limits", "--seconds", "0.05"]) == cli.EXIT_OK
    out = capsys.readouterr().out
    assert "loopback TCP" in out and "msgbench-limits 0.05" in out
    store = Store(store_path)
    run = store.runs()[0]
    assert store.run(run["id"])["metadata"]["limits"]["command"] == "targets/c/bin/msgbench-limits 0.05"
    exported = tmp_path / "limits.json"
    assert cli.main(["--store", str(store_path), "export", run["id"], "-o", str(exported)]) == cli.EXIT_OK
    other = tmp_path / "other.sqlite"
    assert cli.main(["--store", str(other), "import", str(exported)]) == cli.EXIT_OK
    doc = json.loads(exported.read_text())
    carried = Store(other).run(Store(other).runs()[0]["id"])["metadata"]["limits"]
    assert carried == doc["runs"][0]["metadata"]["limits"]
    assert limits.parse(json.dumps({k: carried[k] for k in GOOD if k in carried}))  # still consistent
    # the report of that run with a ceiling beside it: the limits section, from the stored figures
    doc["runs"].append({"id": "r2", "metadata": {}, "summary": [
        _summary("c", "socket", {"mode": "flow", "size": 65536}, "bandwidth_bytes_per_s", 1e9)]})
    page = html.render_html(doc)
    assert "Ceilings against the machine" in page and "C socket flow bandwidth" in page


def test_bad_seconds_is_one_line(tmp_path, capsys):
    assert cli.main(["--store", str(tmp_path / "s.sqlite"), "limits", "--seconds", "0", "--no-build"]) == cli.EXIT_USAGE
    assert capsys.readouterr().err.strip() == ("msgbench: error: --seconds 0: give a time per measurement above 0 "
                                               "and at most 60 s")


def test_two_measurements_of_the_limits_at_once_are_refused(monkeypatch):
    """Issue 30: two `msgbench limits` at once measured each other without a word."""
    ran = []
    monkeypatch.setattr(limits.subprocess, "run", lambda *a, **k: ran.append(a) or (_ for _ in ()).throw(
        AssertionError("measured while another measurement held the machine")))
    held = pytest.raises(limits.LimitsError, match=r"another `msgbench limits`.*measure each other")
    with limits.machine_lock(), held:
        limits.measure(0.1, build=False)
    assert ran == []
    with limits.machine_lock():  # released when its holder is done: the next one goes ahead
        pass
