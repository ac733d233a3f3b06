import pytest

from msgbench.core import spec
from msgbench.running import suites
from msgbench.running import workloads as workload_runs


@pytest.mark.parametrize("name", suites.suite_names())
def test_every_point_of_every_suite_has_valid_params(name):
    suite = suites.load_suite(name)
    assert suite.scenarios
    for scenario in suite.scenarios:
        wl = spec.workload(scenario.workload)
        points = scenario.points()
        assert points, scenario.name
        for _, params in points:
            workload_runs.plugin(wl.name).check(spec.resolve_params(wl, params))


def test_quick_covers_every_workload_that_has_a_worker():
    quick = {s.workload for s in suites.load_suite("quick").scenarios}
    assert {"ring", "fanin", "chat"} <= quick


def test_seeds_reproduce_the_seed_grids():
    seeds = suites.load_suite("seeds").scenarios
    ring = [s for s in seeds if s.workload == "ring"]
    assert ring[0].values == (1000, 5000, 10000, 50000, 100000, 200000, 300000, 400000, 499900)
    assert sorted(s.params["m"] for s in ring) == [1, 5, 10, 50, 100]
    fanin = [s for s in seeds if s.workload == "fanin"]
    assert len(fanin) == 12
    assert fanin[0].values == (1, 2, 4, 8, 15, 16, 31, 32, 47, 48, 63, 64)
    realistic = next(s for s in seeds if s.name == "chat realistic")
    assert [x for x, _ in realistic.points()] == [50, 100, 1000, 1500, 7500, 15000]


def test_cases_need_an_x(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('[[scenario]]\nname = "c"\nworkload = "chat"\ncases = [{ groups = 1 }]\n')
    with pytest.raises(suites.SuiteError, match="needs x and x_value"):
        suites.parse_suite("bad", bad)


def test_a_suite_skips_the_points_a_variant_cannot_hold_and_runs_the_rest(fake_targets, monkeypatch, tmp_path):
    from msgbench.running import runner
    from msgbench.workers import targets

    suite = tmp_path / "s.toml"
    suite.write_text('description = "x"\nrepeat = 1\nwarmup = 0\n[[scenario]]\nname = "ring"\nworkload = "ring"\n'
                     'params = { m = 1 }\nsweep = { n = [10, 100000] }\n')
    fake = targets.target("fake")
    ok = fake.variants["ok"]
    monkeypatch.setitem(fake.variants, "ok", runner.targets.Variant(**{**ok.__dict__, "max_processes": 1000}))
    plan = runner.plan_run(suites.load_suite(str(suite)).scenarios, ["fake"], "ok", 1, 0, None, strict_targets=False)
    assert [j.params["n"] for j in plan.jobs] == [10]
    assert "needs 100,000 processes; fake/ok allows at most 1,000" in plan.skipped[0]
    with pytest.raises(runner.PlanError, match="allows at most 1,000"):
        runner.plan_run(suites.load_suite(str(suite)).scenarios, ["fake"], "ok", 1, 0, None, strict_targets=True)
