"""msgbench build: builds run side by side within --jobs, the longest (as last timed) first,
each one's failure kept with its message, and the times remembered."""

import json
import threading

from msgbench.cli import main
from msgbench.running import building


def test_two_jobs_really_build_side_by_side(tmp_path):
    # Each step waits for the other at a barrier: one at a time, the first would time out.
    both = threading.Barrier(2, timeout=20)
    steps = {"a": both.wait, "b": both.wait}
    done = building.build_all(steps, 2, tmp_path / "times.json", say=lambda line: None)
    assert sorted(b.name for b in done) == ["a", "b"] and all(b.error is None for b in done)


def test_one_job_builds_one_at_a_time(tmp_path):
    running, most = [0], [0]
    lock = threading.Lock()

    def step():
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        threading.Event().wait(0.05)
        with lock:
            running[0] -= 1

    building.build_all({"a": step, "b": step, "c": step}, 1, tmp_path / "t.json", say=lambda line: None)
    assert most[0] == 1


def test_a_failed_build_keeps_its_message_and_the_others_still_build(tmp_path):
    def broken():
        raise RuntimeError("building target x failed (exit 2): no such file")

    said = []
    done = building.build_all({"x": broken, "y": lambda: None}, 2, tmp_path / "t.json", said.append)
    by_name = {b.name: b for b in done}
    assert "no such file" in by_name["x"].error and by_name["y"].error is None
    assert said == [line for line in said if line.startswith("built y in ")] and len(said) == 1
    assert set(json.loads((tmp_path / "t.json").read_text())) == {"y"}  # only what built is timed


def test_the_longest_builds_start_first_and_the_untimed_before_them():
    assert building.order(["go", "rust", "c", "new"], {"go": 20.0, "rust": 300.0, "c": 3.0}) == \
        ["new", "rust", "go", "c"]


def test_jobs_out_of_range_is_one_line(capsys):
    assert main(["build", "--jobs", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["msgbench: error: --jobs 0 is out of range: it must be >= 1"]
