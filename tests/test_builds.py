"""Builds of one target in one interleaved run: declared on the command line or in a
file, each built in its own folder when it may change the compiler, stored by name,
compared and checked; a build that is missing or fails to build leaves the others."""

import json
import shutil
import sys

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.running.builds import BuildError, load_file, parse_option
from tests.conftest import FIXTURE_TARGETS


def run_cli(*args) -> int:
    return main(list(args))


def only_run(store_path):
    store = Store(store_path)
    run = store.runs()[0]
    return run, [m for m in store.measurements(run["id"]) if not m["warmup"]]


def test_two_builds_run_interleaved_and_are_stored_by_name(fake_targets, tmp_path, capsys):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)  # the build's runtime, in its folder
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "2", "--warmup", "0",
                   "--build", f"fake:base={folder}", "--build", "fake:plain")
    assert code == 0
    run, measured = only_run(fake_targets)
    assert [m["build"] for m in measured] == ["base", "plain", "base", "plain"]  # A B A B
    builds = run["metadata"]["builds"]
    assert set(builds) == {"fake@base", "fake@plain"}
    assert builds["fake@base"]["path"] == str(folder) and "Python" in builds["fake@base"]["version"]
    # The build with a path got a folder of its own; the plain one ran in the target's.
    assert builds["fake@base"]["folder"].startswith(str(tmp_path / "builds" / "fake@base"))
    assert (tmp_path / "builds" / "fake@base" / "targets" / "fake" / "worker.py").is_file()
    assert "fixtures" in builds["fake@plain"]["folder"]
    out = capsys.readouterr().out
    assert "fake@base/ok" in out and "fake@plain/ok" in out


def test_a_flags_build_passes_its_runtime_flags(fake_targets, tmp_path):
    builds = tmp_path / "builds.toml"
    builds.write_text('[[build]]\ntarget = "fake"\nlabel = "slow"\nargs = ["--slowdown", "4"]\n'
                      '[[build]]\ntarget = "fake"\nlabel = "fast"\n')
    assert run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--builds", str(builds), "--no-build") == 0
    run, measured = only_run(fake_targets)
    hops = {m["build"]: m["metrics"]["hops_per_s"] for m in measured}
    assert hops["fast"] == pytest.approx(4 * hops["slow"])
    assert run["metadata"]["builds"]["fake@slow"]["args"] == ["--slowdown", "4"]
    # Flags alone change no compiler: the build runs from the target's own folder.
    assert "fixtures" in run["metadata"]["builds"]["fake@slow"]["folder"]


def test_builds_compare_within_a_run_and_check_gates(fake_targets, capsys):
    assert run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "5", "--warmup", "0",
                   "--build", "fake:a", "--build", "fake:b", "--no-build") == 0
    capsys.readouterr()
    assert run_cli("compare", "latest") == 0
    out = capsys.readouterr().out
    assert "builds of run" in out and "against a" in out
    # Two builds of one program: never a leader, though the fake's timings may be too noisy to say.
    assert "ring n=10 m=10 payload=BOO! fake/ok: no significant difference" in out or ": inconclusive: " in out
    code = run_cli("check", "latest@a", "latest@b", "--max-slowdown", "5%")
    out = capsys.readouterr().out
    assert (code, "check: no regression" in out) in ((0, True), (3, False))
    assert code == 0 or "check: inconclusive: 1 of 1 points cannot show a 5.0% slowdown" in out
    assert run_cli("check", "latest@a", "latest@nosuch") == 2
    assert "has no build 'nosuch'; its builds: a, b" in capsys.readouterr().err


def test_check_between_runs_fails_on_a_slowdown_and_passes_a_speedup(fake_targets, monkeypatch, capsys):
    ring = ("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "5", "--warmup", "0", "--no-build")
    assert run_cli(*ring) == 0
    monkeypatch.setenv("FAKE_SLOWDOWN", "10")
    assert run_cli(*ring) == 0
    newer, older = [r["id"] for r in Store(fake_targets).runs()]
    capsys.readouterr()
    assert run_cli("check", older, newer, "--max-slowdown", "5%") == 1
    out = capsys.readouterr().out
    assert "check: regression: 1 of 1 points significantly worse by more than 5.0%" in out
    assert "B is 90.0% worse: hops_per_s -90.0% (p = 0.008)" in out
    assert run_cli("check", newer, older) == 0  # the other way round: a speedup
    assert "check: no regression" in capsys.readouterr().out


def test_check_with_nothing_in_common_is_a_usage_error(fake_targets, capsys):
    for variant in ("ok", "slow"):
        assert run_cli("run", "ring", "--target", "fake", "--variant", variant, "-p", "n=10", "--repeat", "1",
                       "--warmup", "0", "--no-build") == 0
    newer, older = [r["id"] for r in Store(fake_targets).runs()]
    capsys.readouterr()
    assert run_cli("check", older, newer) == 2  # different variants: never a pass by default
    assert "no point in common" in capsys.readouterr().err


def test_a_missing_build_stops_the_run_unless_allowed(fake_targets, capsys):
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--build", "fake:gone=/no/such/folder", "--build", "fake:here", "--no-build")
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines()[-1].endswith(
        "build fake@gone cannot run (build fake@gone: its folder /no/such/folder does not exist): fix it, "
        "or pass --allow-skipped-builds to measure the others")
    assert Store(fake_targets).runs() == []  # nothing measured, nothing stored


def test_a_missing_build_is_skipped_and_the_others_run_when_allowed(fake_targets, capsys):
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--build", "fake:gone=/no/such/folder", "--build", "fake:here", "--no-build",
                   "--allow-skipped-builds")
    assert code == 0
    err = capsys.readouterr().err
    assert "build fake@gone: its folder /no/such/folder does not exist" in err
    run, measured = only_run(fake_targets)
    assert {m["build"] for m in measured} == {"here"}
    assert any("fake@gone" in note for note in run["notes"])


def test_a_build_folder_without_the_runtime_is_refused_by_name(fake_targets, tmp_path, capsys):
    empty = tmp_path / "no-runtime"
    empty.mkdir()
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--build", f"fake:empty={empty}", "--build", "fake:here", "--no-build")
    assert code == 2
    assert (f"build fake@empty: its folder {empty} holds none of python3: it would run the system's runtime "
            "under the build's name") in capsys.readouterr().err
    assert Store(fake_targets).runs() == []


def test_a_build_whose_runtime_is_broken_is_skipped_by_name_and_the_others_run(fake_targets, tmp_path, capsys):
    broken = tmp_path / "broken-bin"
    broken.mkdir()
    runtime = broken / "python3"  # there, but it cannot start: a half-installed runtime
    runtime.write_text("#!/bin/sh\necho 'python3: error while loading shared libraries: libpython3.so' >&2\nexit 127\n")
    runtime.chmod(0o755)
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--build", f"fake:broken={broken}", "--build", "fake:here", "--no-build",
                   "--allow-skipped-builds")
    assert code == 0
    err = capsys.readouterr().err
    assert ("build fake@broken: its runtime does not work: `python3 worker.py --version` exited with code 127: "
            "python3: error while loading shared libraries") in err
    run, measured = only_run(fake_targets)
    assert {m["build"] for m in measured} == {"here"}
    assert any("fake@broken: its runtime does not work" in note for note in run["notes"])


def test_a_builds_version_command_runs_once_per_run(fake_targets, tmp_path):
    """It is both the check that the build's runtime works and the run's metadata: a
    runtime's whole start-up (erl, java) asked once, not twice."""
    wrapped = tmp_path / "wrapped-bin"
    wrapped.mkdir()
    calls = tmp_path / "calls"
    runtime = wrapped / "python3"
    runtime.write_text(f'#!/bin/sh\necho "$*" >> {calls}\nexec {sys.executable} "$@"\n')
    runtime.chmod(0o755)
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "2", "--warmup", "0",
                   "--build", f"fake:wrapped={wrapped}")
    assert code == 0
    asked = [line for line in calls.read_text().splitlines() if "--version" in line]
    assert asked == ["worker.py --version"]
    run, measured = only_run(fake_targets)
    assert len(measured) == 2 and run["metadata"]["builds"]["fake@wrapped"]["version"].startswith("Python 3")


def test_a_build_that_fails_to_build_is_skipped_and_the_others_run(fake_targets, tmp_path, capsys):
    builds = tmp_path / "builds.toml"
    builds.write_text('[[build]]\ntarget = "fake"\nlabel = "broken"\nenv = { FAKE_BUILD_FAILS = "1" }\n'
                      '[[build]]\ntarget = "fake"\nlabel = "fine"\nenv = { FAKE_OK = "1" }\n')
    ring = ("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0", "--builds", str(builds))
    assert run_cli(*ring) == 2  # one build could not be built: nothing to compare it with
    assert "build fake@broken cannot run (build fake@broken failed to build" in capsys.readouterr().err
    code = run_cli(*ring, "--allow-skipped-builds")
    assert code == 0
    err = capsys.readouterr().err
    assert "building target fake@broken failed" in err and "the compiler refused" in err
    run, measured = only_run(fake_targets)
    assert {m["build"] for m in measured} == {"fine"}
    assert any("build fake@broken failed to build" in note for note in run["notes"])


def test_exports_carry_builds(fake_targets, tmp_path, capsys):
    assert run_cli("run", "fanin", "--target", "fake", "--sweep", "senders=1,2", "--repeat", "2",
                   "--warmup", "0", "--build", "fake:master_2ef0c", "--build", "fake:parallel_sigq",
                   "--no-build") == 0
    capsys.readouterr()
    assert run_cli("export", "latest", "--format", "otp") == 0
    otp = capsys.readouterr().out
    assert "\nmaster_2ef0c; " in otp and "\nparallel_sigq; " in otp  # as the OTP suite labels a release
    for fmt in ("json", "csv", "md"):
        out = tmp_path / f"run.{fmt}"
        assert run_cli("export", "latest", "--format", fmt, "-o", str(out)) == 0
        other = tmp_path / f"other-{fmt}.sqlite"
        assert run_cli("--store", str(other), "import", str(out)) == 0
        back = Store(other)
        run_id = back.runs()[0]["id"]
        assert {m["build"] for m in back.measurements(run_id)} == {"master_2ef0c", "parallel_sigq"}
    doc = json.loads((tmp_path / "run.json").read_text())
    assert {s["build"] for s in doc["runs"][0]["summary"]} == {"master_2ef0c", "parallel_sigq"}


@pytest.mark.parametrize("text, words", [
    ("erlang", "expected TARGET:LABEL"),
    ("erlang:", "expected TARGET:LABEL"),
    ("erlang:bad label", "label 'bad label' must be"),
])
def test_a_malformed_build_is_refused_in_one_line(text, words):
    with pytest.raises(BuildError, match=words):
        parse_option(text)


def test_a_builds_file_with_an_unknown_key_is_refused(tmp_path):
    path = tmp_path / "builds.toml"
    path.write_text('[[build]]\ntarget = "go"\nlabel = "x"\ngoroot = "/usr/lib/go"\n')
    with pytest.raises(BuildError, match="unknown key 'goroot'"):
        load_file(path)


def test_a_build_named_twice_and_an_unknown_target_are_refused(fake_targets, capsys):
    assert run_cli("run", "ring", "--target", "fake", "--build", "fake:a", "--build", "fake:a", "--no-build") == 2
    assert "build fake:a is declared twice" in capsys.readouterr().err
    assert run_cli("run", "ring", "--target", "fake", "--build", "nosuch:a", "--no-build") == 2
    assert "build nosuch:a: unknown target 'nosuch'" in capsys.readouterr().err


def test_the_page_and_the_report_draw_one_series_per_build(fake_targets, tmp_path, capsys):
    from msgbench.views.web import shape

    assert run_cli("run", "fanin", "--target", "fake", "--sweep", "senders=1,2", "--repeat", "2", "--warmup", "0",
                   "--build", "fake:before", "--build", "fake:after", "--no-build") == 0
    capsys.readouterr()
    assert run_cli("export", "latest", "--format", "json") == 0
    source = shape.parse_text(capsys.readouterr().out, "run")
    send = next(g for g in source["graphs"] if g["key"].startswith("otp|") and "Send" in g["title"])
    assert [s["label"] for s in send["series"]] == ["fake@before/ok", "fake@after/ok"]
    html = tmp_path / "report.html"
    assert run_cli("report", "latest", "-o", str(html)) == 0
    text = html.read_text()
    assert "fake@before/ok" in text and "fake@after/ok" in text


def test_a_build_of_a_target_not_in_target_is_refused(fake_targets, capsys):
    code = run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
                   "--build", "fakebroker:new", "--no-build")
    assert code == 2
    assert ("--build for fakebroker, which --target fake does not include: add fakebroker to --target"
            in capsys.readouterr().err)
    assert Store(fake_targets).runs() == []


def test_no_build_refuses_a_build_whose_own_copy_was_never_built(fake_targets, tmp_path, capsys):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "python3").symlink_to(sys.executable)
    ring = ("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "1", "--warmup", "0",
            "--build", f"fake:new={folder}", "--build", "fake:plain")
    assert run_cli(*ring, "--no-build") == 2
    assert ("--no-build: build fake@new has never been built in its folder "
            f"{tmp_path / 'builds' / 'fake@new' / 'targets' / 'fake'}; run once without --no-build"
            in capsys.readouterr().err)
    assert Store(fake_targets).runs() == []
    assert run_cli(*ring) == 0  # built now
    assert run_cli(*ring, "--no-build") == 0


def test_a_checkout_build_runs_that_checkouts_own_target_beside_this_ones(fake_targets, tmp_path):
    # Old code against new: the other checkout's target.toml and code, as they are there.
    old = tmp_path / "old-checkout"
    shutil.copytree(FIXTURE_TARGETS / "fake", old / "targets" / "fake")
    toml = old / "targets" / "fake" / "target.toml"
    toml.write_text(toml.read_text().replace('run = ["python3", "worker.py", "{process_limit}", "{variant_args}"]',
                                             'run = ["python3", "worker.py", "{process_limit}", "--slowdown", "4", '
                                             '"{variant_args}"]'))
    builds = tmp_path / "builds.toml"
    builds.write_text('[[build]]\ntarget = "fake"\nlabel = "old"\ncheckout = "old-checkout"\n'
                      '[[build]]\ntarget = "fake"\nlabel = "new"\n')
    assert run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "2", "--warmup", "0",
                   "--builds", str(builds), "--no-build") == 0
    run, measured = only_run(fake_targets)
    assert [m["build"] for m in measured] == ["old", "new", "old", "new"]
    hops = {m["build"]: m["metrics"]["hops_per_s"] for m in measured}
    assert hops["new"] == pytest.approx(4 * hops["old"])  # the old checkout's run command ran
    described = run["metadata"]["builds"]["fake@old"]
    assert described["checkout"] == str(old) and described["folder"] == str(old / "targets" / "fake")


def test_a_checkout_without_the_target_is_refused_in_one_line(fake_targets, tmp_path, capsys):
    builds = tmp_path / "builds.toml"
    builds.write_text(f'[[build]]\ntarget = "fake"\nlabel = "old"\ncheckout = "{tmp_path}"\n')
    assert run_cli("run", "ring", "--target", "fake", "--builds", str(builds), "--no-build") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (f"msgbench: error: build fake:old: checkout {tmp_path} has no targets/fake/target.toml "
                       "(expected a msgbench checkout)")
