"""CPU placement: a policy chosen, applied by the harness before each worker starts, read
back from the kernel while the worker runs, stored with every measurement and shown."""

import os

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.workers import cpus

RING = ["run", "ring", "--target", "fake", "-p", "n=10", "-p", "m=1", "--repeat", "2", "--warmup", "0",
        "--no-build"]
needs_two = pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="placement splits at least two CPUs")


def measurements(store_path) -> tuple[dict, list[dict]]:
    store = Store(store_path)
    run = store.runs()[0]
    return store.run(run["id"]), store.measurements(run["id"])


def test_layouts_split_the_cpus_by_role():
    two = cpus.layout(cpus.PINNED, frozenset({0, 1}))
    assert (two.harness, two.brokers, two.measured, two.cores) == ({0}, {0}, {1}, 1)
    eight = cpus.layout(cpus.PINNED, frozenset(range(8)))
    assert eight.harness == {0} and eight.brokers == {1, 2} and eight.measured == {3, 4, 5, 6, 7}
    assert cpus.layout(cpus.PINNED, frozenset({3})).measured is None  # one CPU: nothing to split
    assert cpus.layout(cpus.UNPINNED, frozenset(range(8))).as_dict() == {"policy": "unpinned"}
    assert cpus.cpu_list({0, 1, 2, 5, 7, 8}) == "0-2,5,7-8"
    assert cpus.parse_cpu_list("0-2,5,7-8") == {0, 1, 2, 5, 7, 8}


@needs_two
def test_pinned_workers_run_on_their_cpus_as_the_kernel_reads_back(fake_targets, capsys):
    before = os.sched_getaffinity(0)
    assert main([*RING, "--cpus", "pinned"]) == 0
    assert os.sched_getaffinity(0) == before  # the harness gives its own CPUs back
    run, ms = measurements(fake_targets)
    wanted = cpus.layout(cpus.PINNED)
    assert run["metadata"]["cpu_placement"]["measured"] == cpus.cpu_list(wanted.measured)
    for m in ms:
        placed = m["worker"]["cpu_placement"]
        assert placed["cpus"] == cpus.cpu_list(wanted.measured)
        # Read from /proc while the worker ran: the worker itself and its supervisor.
        assert any(name.startswith("python") for name in placed["seen"]) and "worker at its start" in placed["seen"]
        assert all(cpus.parse_cpu_list(c) == wanted.measured for c in placed["seen"].values())
    assert f"cpus: pinned: measured processes on CPU {cpus.cpu_list(wanted.measured)}" in capsys.readouterr().out


@needs_two
def test_unpinned_is_a_labelled_choice_that_sets_nothing(fake_targets, capsys):
    assert main([*RING, "--cpus", "unpinned"]) == 0
    run, ms = measurements(fake_targets)
    assert run["metadata"]["cpu_placement"]["policy"] == "unpinned"
    every = cpus.cpu_list(os.sched_getaffinity(0))
    assert all(m["worker"]["cpu_placement"]["seen"]["worker at its start"] == every for m in ms)
    assert "cpus: unpinned" in capsys.readouterr().out


@needs_two
def test_a_worker_that_leaves_its_cpus_fails_its_measurement(fake_targets, capsys):
    assert main([*RING, "--variant", "unpin"]) == 1
    _, ms = measurements(fake_targets)
    assert {m["status"] for m in ms} == {"error"}
    assert "placement not held" in ms[0]["error"] and "may run on" not in ms[0]["error"]


def test_an_unknown_policy_is_one_clear_line(fake_targets, capsys):
    assert main([*RING, "--cpus", "spread"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--cpus 'spread' is not a placement policy" in err[-1] and "pinned" in err[-1]
