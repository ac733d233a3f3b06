"""The report's History section: stored runs of the same scenarios, in time order."""

import pytest

from msgbench.data.store import Store
from msgbench.views import report
from tests.report.report_fixtures import measurement


def ring_run(run_id: str, started: str, speeds: dict) -> dict:
    """Six repetitions per point (three cannot reach p < 0.05 in a U test), n = 1k and 10k."""
    ms = []
    for target, hops in speeds.items():
        for n in (1000, 10000):
            for rep in range(1, 7):
                value = hops * (1 + rep / 100)
                ms.append(measurement(run_id, "ring", "ring", target, "default",
                                      {"n": n, "m": 10, "payload": "BOO!"}, "n", rep, False,
                                      metrics={"hops_per_s": value, "pass_wall_ms": n * 10 / value * 1e3},
                                      verify={"hops": n * 10, "laps": 10, "links": n}))
    return {"id": run_id, "created_at": started, "finished_at": started, "status": "complete",
            "command": "msgbench run", "suite": "quick", "notes": [], "metadata": {},
            "measurements": ms}


@pytest.fixture
def store(tmp_path):
    store = Store(tmp_path / "history.sqlite")
    yield store
    store.close()


def test_no_history_from_a_store_with_one_run(store):
    run = ring_run("r1", "2026-11-20T10:00:00+00:00", {"erlang": 1e7, "go": 2e7})
    store.import_run(run, "test")
    assert report.history(store, {"runs": [run]}) == []


def test_history_draws_each_target_over_the_runs_and_rings_the_step(store):
    runs = [ring_run("r1", "2026-11-20T10:00:00+00:00", {"erlang": 1e7, "go": 2e7}),
            ring_run("r2", "2026-11-21T10:00:00+00:00", {"erlang": 1e7, "go": 2e7}),
            ring_run("r3", "2026-11-22T10:00:00+00:00", {"erlang": 1e7, "go": 1e7})]  # go slows down
    for run in runs:
        store.import_run(run, "test")
    [chart] = report.history(store, {"runs": [runs[-1]]})
    assert chart["title"] == "ring: hops (/s) over the stored runs"
    assert chart["subtitle"] == "n=10000 m=10 payload=BOO!"  # the scenario's largest x
    erlang, go, step = chart["traces"]
    assert erlang["label"] == "erlang/default" and go["label"] == "go/default"
    assert erlang["x"] == ["2026-11-20 10:00:00", "2026-11-21 10:00:00", "2026-11-22 10:00:00"]
    assert go["y"][0] == pytest.approx(2e7 * 1.035) and go["y"][2] == pytest.approx(1e7 * 1.035)
    assert "-50.0% vs the run before" in go["note"][2] and "a step change" in go["note"][2]
    assert "step change" not in erlang["note"][2]
    assert step["x"] == ["2026-11-22 10:00:00"] and step["marker"] == "ring"
    assert erlang["colour"] != go["colour"] and step["line"] == "none"
    # Drawn in the report, after the workloads' sections and before the metadata.
    page = report.render_html({"runs": [runs[-1]]}, history=[chart])
    assert page.index('data-workload="ring"') < page.index('id="history"') < page.index('id="runs"')
    assert f'data-figure="{chart["id"]}"' in page


def test_socket_echo_history_follows_the_round_trip_not_the_specs_bandwidth(store):
    def run(run_id, started, rtt):
        ms = [measurement(run_id, "socket-echo", "socket", "c", "default",
                          {"mode": "echo", "size": size, "sockets": 1}, "size", rep, False,
                          metrics={"round_trip_us": rtt + rep, "msgs_per_s": 1e6 / rtt,
                                   "bandwidth_bytes_per_s": size * 1e6 / rtt})
              for size in (64, 1024) for rep in range(1, 5)]
        return {"id": run_id, "created_at": started, "status": "complete", "measurements": ms}
    runs = [run("a", "2026-11-20T10:00:00+00:00", 50.0), run("b", "2026-11-21T10:00:00+00:00", 60.0)]
    for r in runs:
        store.import_run(r, "test")
    [chart] = report.history(store, {"runs": [runs[-1]]})
    assert chart["title"] == "socket-echo: round trip (µs) over the stored runs"
    assert chart["traces"][0]["y"] == [52.5, 62.5]
