"""msgbench capacity end to end on a fake system of known capacity (tests/fixtures/targets/
fakeknee: p99 about 1.5 ms up to 20,000 msg/s, over 20 ms past it; no real time taken),
and the chat axes' arithmetic."""

import contextlib
import io

import pytest

from msgbench.cli import main
from msgbench.core import spec
from msgbench.data import results
from msgbench.data.store import Store
from msgbench.running import capacity, capacity_run, runner
from msgbench.views import capacity_view
from msgbench.views.report import html
from msgbench.views.web import shape
from msgbench.workers import chat_server, targets
from tests.conftest import FIXTURE_TARGETS

# Every test here reads the one capacity run of the module's fixture (half a minute): under
# pytest -n they run on one worker, so that it runs once, not once per worker.
pytestmark = pytest.mark.xdist_group("capacity-run")

KNEE = 20_000


@pytest.fixture(scope="module")
def searched_once(tmp_path_factory):
    """One capacity run of two systems, for every test here (it takes half a minute): the
    fake of known capacity and one that never holds."""
    store_path = tmp_path_factory.mktemp("capacity") / "store.sqlite"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MSGBENCH_TARGETS_DIR", str(FIXTURE_TARGETS))
        patch.setenv("MSGBENCH_STORE", str(store_path))
        patch.setenv("MSGBENCH_MIN_TIME", "0")
        targets.registry.cache_clear()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            code = main(["capacity", "pubsub", "--target", "fakeknee", "--variant", "knee,slow", "--slo", "p99=5ms",
                         "-p", "duration_s=0.5", "--no-build"])
        targets.registry.cache_clear()
    return code, out.getvalue(), store_path


@pytest.fixture
def searched(searched_once, fake_targets, monkeypatch):
    code, out, store_path = searched_once
    monkeypatch.setenv("MSGBENCH_STORE", str(store_path))
    store = Store(store_path)
    doc = results.run_document(store, [store.resolve("latest")])
    return code, out, doc, store


def test_the_search_finds_the_known_capacity_within_two_percent_in_bounded_steps(searched):
    code, out, doc, _ = searched
    assert code == 0
    run = doc["runs"][0]
    found = run["metadata"]["capacity"]["results"]["fakeknee/knee"]
    assert found["status"] == capacity.FOUND
    assert KNEE * 0.98 <= found["capacity"] <= KNEE
    assert found["steps"] <= 16  # 6 doublings past 1,000, 6 bisections to 2%, 2 confirming runs
    assert found["runs_at_capacity"] == 3
    assert "fakeknee/knee: capacity 20,000 msg/s at p99 <= 5 ms (confirmed by 3 runs" in out


def test_a_system_that_never_meets_the_bound_says_so(searched):
    _, out, doc, _ = searched
    found = doc["runs"][0]["metadata"]["capacity"]["results"]["fakeknee/slow"]
    assert found["status"] == capacity.NEVER and found["capacity"] is None
    assert "fakeknee/slow: never meets p99 <= 5 ms (no load held, down to" in out


def test_every_step_is_an_ordinary_stored_measurement_interleaved_across_systems(searched, capsys):
    _, _, doc, _ = searched
    run = doc["runs"][0]
    steps = [m for m in run["measurements"] if not m["warmup"]]
    results_ = run["metadata"]["capacity"]["results"]
    assert len(steps) == sum(r["steps"] for r in results_.values())
    assert [m["variant"] for m in steps[:4]] == ["knee", "slow", "knee", "slow"]
    assert all(m["worker"]["histograms"]["latency_ns"] for m in steps)  # histograms stored whole
    assert {s["sweep"] for s in run["summary"]} == {"rate"}
    # show lists the steps and ends with the answer; compare reads them as points
    assert main(["show", "latest"]) == 0
    shown = capsys.readouterr().out
    assert "20000" in shown and "fakeknee/knee: capacity 20,000 msg/s" in shown
    assert main(["compare", "latest", "latest"]) == 0


def test_the_curve_merges_the_confirming_runs_and_the_report_draws_the_knee_at_the_capacity(searched):
    _, out, doc, _ = searched
    view = capacity_view.of_run(doc["runs"][0])
    knee_system = next(s for s in view.systems if s.label == "fakeknee/knee")
    top = next(p for p in knee_system.points if p.offered == knee_system.result["capacity"])
    assert top.runs == 3 and top.held
    assert knee_system.knee.offered == knee_system.result["capacity"]
    assert knee_system.spectrum[0][0] == 0.0 and knee_system.spectrum[-1][0] == 100.0
    sections = html.sections_of(doc)
    section = next(s for s in sections if s["id"] == "capacity")
    curve = next(i for i in section["items"] if i["id"] == "capacity-0-0-curve")
    assert curve["y"]["scale"] == "log"
    knee = next(t for t in curve["traces"] if t["label"].startswith("knee"))
    assert knee["x"] == [knee_system.result["capacity"]]
    bound = next(t for t in curve["traces"] if t["label"].startswith("bound"))
    assert set(bound["y"]) == {5.0}  # ms
    assert {t["label"].rsplit(" ", 1)[-1] for t in curve["traces"][:5]} == {"p50", "p90", "p99", "p99.9", "max"}
    assert "held C K\n" in out
    page = html.render_html(doc)
    assert "Capacity: the highest load under a latency bound" in page
    graphs = [g for g in shape.from_document(doc, "run")["graphs"] if g["key"].startswith("capacity|")]
    assert {g["title"] for g in graphs} == {"fakeknee/knee: latency against offered load",
                                            "fakeknee/slow: latency against offered load"}
    assert all(g["y_scale"] == "log" for g in graphs)


def test_a_search_in_which_no_step_measured_anything_says_what_failed(fake_targets, capsys):
    """A connection refused is not a latency: not "never meets the bound" but the error, exit 1."""
    assert main(["capacity", "pubsub", "--target", "fakeknee", "--variant", "broken", "--slo", "p99=5ms",
                 "-p", "duration_s=0.5", "--max-steps", "3", "--no-build", "--no-probe"]) == 1
    out = capsys.readouterr().out
    store = Store(fake_targets)
    found = store.run(store.resolve("latest"))["metadata"]["capacity"]["results"]["fakeknee/broken"]
    assert found["status"] == capacity.FAILED and found["steps"] == 3 and found["capacity"] is None
    assert found["why"].startswith("every step failed, the last with error: resource: connect to the fake broker")
    assert "fakeknee/broken: no capacity: failed (every step failed" in out


def test_bad_capacity_requests_are_refused_in_one_line(fake_targets, capsys):
    cases = [
        (["capacity", "pubsub", "--target", "fakeknee", "--slo", "p99=5"], "'5' is no latency bound"),
        (["capacity", "ring", "--slo", "p99=5ms"], "has no capacity search; it has: chat, pubsub, socket"),
        (["capacity", "socket", "--slo", "p99=5ms", "-p", "mode=flow"], "flow has no open loop"),
        (["capacity", "socket", "--slo", "p99=5ms", "-p", "total_bytes=4096"], "sets socket's total_bytes itself"),
        (["capacity", "pubsub", "--slo", "p99=5ms", "-p", "rate=100"], "sets pubsub's rate itself"),
        (["capacity", "pubsub", "--slo", "p99=5ms", "--load", "users"], "searched over rate"),
        (["capacity", "chat", "--slo", "p99=5ms", "-p", "think_ms=0"], "give think_ms > 0"),
        (["capacity", "pubsub", "--target", "fakeknee", "--slo", "p99=5ms", "--precision", "0%"],
         "--precision"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, err


# ---------------------------------------------------------------- the chat axes


def test_chat_users_step_in_whole_groups_and_rate_through_whole_ms_of_think_time():
    users = capacity_run.axis_for("chat", None)
    base = capacity_run.base_params(users, {})
    assert (base["server"], base["think_ms"], base["clients_per_group"], base["duration_s"]) == ("ws", 5000, 10, 30)
    assert users.quantize(base)(1234) == 1230
    assert users.params_for(1230, base)["groups"] == 123
    assert users.achieved({"achieved_send_ratio": 0.995}, base | {"groups": 100}) == pytest.approx(995)
    rate = capacity_run.axis_for("chat", "rate")
    fixed = capacity_run.base_params(rate, {"groups": 100})  # 1,000 users
    assert rate.params_for(300, fixed)["think_ms"] == 3333
    assert rate.quantize(fixed)(300) == pytest.approx(1000 * 1000 / 3333)
    assert rate.default_start(fixed) == 200  # every user once in 5 s


def test_socket_echo_steps_offer_a_rate_for_about_three_seconds_of_echoes():
    rate = capacity_run.axis_for("socket", None)
    base = capacity_run.base_params(rate, {"sockets": 2})
    assert base["mode"] == "echo"
    step = rate.params_for(3000, base)
    # 3,000/s over 2 sockets for 3 s: 4,500 messages of 1 KiB on each socket
    assert (step["rate"], step["total_bytes"]) == (3000, 4500 * 1024)
    assert rate.load_of(step) == 3000 and rate.achieved({"msgs_per_s": 2990.0}, step) == 2990.0
    limit, why = rate.machine_limit(base, None, runner.MEMORY_HEADROOM)
    assert rate.params_for(limit, base)["total_bytes"] <= spec.workload("socket").params["total_bytes"]["maximum"]
    assert "socket's spec" in why


def test_chat_users_stop_at_the_machines_descriptors_and_say_so(monkeypatch):
    monkeypatch.setattr(chat_server, "fd_ceiling", lambda: (19_956, "the hard RLIMIT_NOFILE"))
    users = capacity_run.axis_for("chat", "users")
    base = capacity_run.base_params(users, {})
    server = type("Server", (), {"extra": {"per_connection_bytes": 1}, "label": "tiny"})()  # memory never binds
    limit, why = users.machine_limit(base, server, runner.MEMORY_HEADROOM)
    assert limit == 19_700 and "file descriptors" in why
    search = capacity.Search(start=1000, limit=limit, quantize=users.quantize(base), limit_why=why)
    while (probe := search.next()) is not None:
        search.record(probe.load, True)
    assert search.status == capacity.MACHINE_LIMIT and search.capacity == 19_700


def test_the_terminal_summary_fits_80_columns(searched):
    _, out, _, _ = searched
    assert "capacity: pubsub rate under p99 <= 5 ms" in out
    assert max(len(line) for line in out.splitlines()) <= 80


def test_the_bisection_stops_at_the_noise_floor_when_it_is_wider_than_the_precision():
    from types import SimpleNamespace

    from msgbench import capacity_cli

    axis = capacity_run.axis_for("pubsub", None)
    settings = capacity_run.Settings(slo=capacity.parse_slo(["p99=5ms"]), axis=axis, base={})
    noisy = SimpleNamespace(noise_floor={"cv": 0.06, "slices": 10}, metadata={"capacity": {}})
    capacity_cli.within_noise(settings, noisy)
    assert settings.precision == 0.06 and noisy.metadata["capacity"]["precision"] == 0.06
    quiet = SimpleNamespace(noise_floor={"cv": 0.004, "slices": 10}, metadata={"capacity": {}})
    capacity_cli.within_noise(settings := capacity_run.Settings(settings.slo, axis, {}), quiet)
    assert settings.precision == capacity.DEFAULT_PRECISION


def test_a_malformed_imported_search_is_no_search_rather_than_a_crash(searched):
    import copy

    _, _, doc, _ = searched
    run = copy.deepcopy(doc["runs"][0])
    run["metadata"]["capacity"]["results"]["fakeknee/knee"]["capacity"] = "lots"
    run["measurements"][0]["worker"]["histograms"]["latency_ns"] = [["x", 1]]
    view = capacity_view.of_run(run)
    knee_system = next(s for s in view.systems if s.label == "fakeknee/knee")
    assert knee_system.result["capacity"] is None
    assert "no capacity" in capacity_view.headline(view, knee_system)
    del run["metadata"]["capacity"]["slo"]
    assert capacity_view.of_run(run) is None
    html.render_html({"format": doc["format"], "version": doc["version"], "runs": [run]})
