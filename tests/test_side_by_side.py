"""make test's phases side by side (scripts/side-by-side.sh): they really overlap, each
line says its phase, each phase times itself (scripts/timed.sh) so that the timing line
gives each one's wall time and a total that is not their sum, and one failure fails the
whole after every phase has ended."""

import re
import subprocess

from msgbench.core.paths import REPO_ROOT

SCRIPT = REPO_ROOT / "scripts" / "side-by-side.sh"
TIMED = REPO_ROOT / "scripts" / "timed.sh"


def side_by_side(*phases: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(SCRIPT), *phases], capture_output=True, text=True, timeout=60)


def test_phases_overlap_each_line_names_its_phase_and_each_is_timed(tmp_path):
    log = tmp_path / "times"
    done = side_by_side("first", f"{TIMED} {log} first bash -c 'sleep 1; echo one'",
                        "second", f"{TIMED} {log} second bash -c 'sleep 1; echo two; echo more'")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.splitlines()) == ["[first] one", "[second] more", "[second] two"]
    (a, a_start, a_end), (b, b_start, b_end) = sorted(line.split("\t") for line in log.read_text().splitlines())
    assert (a, b) == ("first", "second")
    assert int(b_start) < int(a_end) and int(a_start) < int(b_end)  # at the same time, not one after another
    for start, end in ((a_start, a_end), (b_start, b_end)):
        assert 1000 <= int(end) - int(start) < 2500  # each phase's own wall time
    summary = subprocess.run(["bash", str(TIMED), "--summary", str(log), "make test"],
                             capture_output=True, text=True, check=True).stdout
    wall_ms = max(int(a_end), int(b_end)) - min(int(a_start), int(b_start))
    assert wall_ms < (int(a_end) - int(a_start)) + (int(b_end) - int(b_start)) - 500
    assert summary.startswith(f"make test took {int(wall_ms / 1000 + 0.5)} s: "), summary  # the wall time, not the sum
    assert re.search(r"\bfirst [12] s\b", summary) and re.search(r"\bsecond [12] s\b", summary), summary


def test_a_failed_phase_fails_the_whole_naming_it_once_every_phase_has_ended(tmp_path):
    marker = tmp_path / "slow-ended"
    done = side_by_side("target tests", "exit 3", "slow", f"sleep 0.5; touch {marker}", "lint", "exit 1",
                        "fine", "true")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "failed: target tests, lint"
    assert marker.exists()  # the other phases ran to their end


def test_a_failed_phase_shows_its_failed_tests_and_its_last_lines_again_at_the_end():
    pytest_like = ("echo 'FAILED tests/test_a.py::test_one - assert 1 == 2'; seq 1 60; "
                   "echo '1 failed, 9 passed'; exit 1")
    done = side_by_side("harness tests", pytest_like, "lint", "echo clean")
    assert done.returncode == 1
    end = done.stderr.strip().splitlines()
    assert end[0] == "--- harness tests failed; its failed tests, then its last 40 lines:"
    assert end[1] == "[harness tests] FAILED tests/test_a.py::test_one - assert 1 == 2"
    assert end[2:-1] == [f"[harness tests] {n}" for n in range(22, 61)] + ["[harness tests] 1 failed, 9 passed"]
    assert end[-1] == "failed: harness tests"
    assert "[lint]" not in done.stderr  # a phase that passed is not shown again


def test_a_phase_without_its_command_is_refused():
    done = side_by_side("lint")
    assert done.returncode == 2
    assert done.stderr.strip() == "usage: scripts/side-by-side.sh PHASE CMD [PHASE CMD]..."
