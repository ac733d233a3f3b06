"""msgbench tune and --revert on a fake /sys, and doctor's list of what adds noise."""

import json

import pytest

from msgbench.cli import main
from msgbench.running import tuning

CPU = "sys/devices/system/cpu"


def _tree(root, files: dict) -> None:
    for relative, value in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(value + "\n")


@pytest.fixture
def fake_sys(tmp_path, monkeypatch):
    """A machine with cpufreq on two CPUs, intel_pstate turbo on and haltpoll's polling off."""
    root = tmp_path / "root"
    _tree(root, {
        f"{CPU}/cpu0/cpufreq/scaling_governor": "powersave",
        f"{CPU}/cpu1/cpufreq/scaling_governor": "schedutil",
        f"{CPU}/cpu0/topology/thread_siblings_list": "0-1",
        f"{CPU}/cpu1/topology/thread_siblings_list": "0-1",
        f"{CPU}/intel_pstate/no_turbo": "0",
        f"{CPU}/cpuidle/current_driver": "haltpoll",
        tuning.HALTPOLL: "0",
        f"{CPU}/isolated": "",
        "proc/loadavg": "0.10 0.20 0.30 1/90 1234",
    })
    monkeypatch.setenv(tuning.ROOT_ENV, str(root))
    monkeypatch.setattr(tuning.os, "geteuid", lambda: 0)
    return root


def _values(root) -> dict:
    return {p: (root / p).read_text().strip() for p in (f"{CPU}/cpu0/cpufreq/scaling_governor",
                                                        f"{CPU}/cpu1/cpufreq/scaling_governor",
                                                        f"{CPU}/intel_pstate/no_turbo", tuning.HALTPOLL)}


def test_tune_then_revert_restores_exactly_what_was_there(fake_sys, capsys):
    original = _values(fake_sys)
    assert main(["tune"]) == 0
    out = capsys.readouterr().out
    assert _values(fake_sys) == {f"{CPU}/cpu0/cpufreq/scaling_governor": "performance",
                                 f"{CPU}/cpu1/cpufreq/scaling_governor": "performance",
                                 f"{CPU}/intel_pstate/no_turbo": "1", tuning.HALTPOLL: "200000"}
    assert f"/{CPU}/cpu0/cpufreq/scaling_governor: powersave -> performance" in out
    assert f"/{tuning.HALTPOLL}: 0 -> 200000" in out
    # Someone changes a value between two tunes: the second tune sets it again, and
    # the saved original is still the one from before the first.
    (fake_sys / f"{CPU}/cpu0/cpufreq/scaling_governor").write_text("ondemand\n")
    assert main(["tune"]) == 0
    assert "ondemand -> performance" in capsys.readouterr().out
    assert json.loads((fake_sys / tuning.STATE).read_text()) == original
    assert main(["tune", "--revert"]) == 0
    assert f"/{CPU}/cpu1/cpufreq/scaling_governor: performance -> schedutil" in capsys.readouterr().out
    assert _values(fake_sys) == original
    assert not (fake_sys / tuning.STATE).exists()
    assert main(["tune", "--revert"]) == 0
    assert "nothing to revert" in capsys.readouterr().out


def test_boost_is_switched_off_where_there_is_no_intel_pstate(fake_sys, capsys):
    (fake_sys / f"{CPU}/intel_pstate/no_turbo").unlink()
    _tree(fake_sys, {f"{CPU}/cpufreq/boost": "1"})
    assert main(["tune"]) == 0
    assert (fake_sys / f"{CPU}/cpufreq/boost").read_text().strip() == "0"
    assert main(["tune", "--revert"]) == 0
    assert (fake_sys / f"{CPU}/cpufreq/boost").read_text().strip() == "1"


def test_a_polling_value_someone_chose_is_left_alone(fake_sys):
    (fake_sys / tuning.HALTPOLL).write_text("50000\n")
    assert tuning.HALTPOLL not in tuning.wanted()


def test_tune_without_root_is_one_line_and_changes_nothing(fake_sys, monkeypatch, capsys):
    monkeypatch.setattr(tuning.os, "geteuid", lambda: 1000)
    before = _values(fake_sys)
    assert main(["tune"]) == 1
    err = capsys.readouterr().err
    assert err == "msgbench: msgbench tune writes /sys and needs root: run it with sudo\n"
    assert _values(fake_sys) == before


def test_doctor_names_what_adds_noise_and_what_tune_changes(fake_sys):
    by_name = {s.name: s for s in tuning.sources()}
    assert by_name["other load"].now.startswith("load average 0.10 0.20 0.30")
    assert by_name["SMT siblings"].now == "0-1"
    assert by_name["CPU frequency governor"].now == "powersave, schedutil"
    assert by_name["CPU frequency governor"].tune == "yes: performance"
    assert by_name["turbo / boost"].now == "intel_pstate turbo on"
    assert by_name["idle polling"].now == "haltpoll guest_halt_poll_ns = 0 (driver haltpoll)"
    assert "through the hypervisor" in by_name["idle polling"].effect
    assert by_name["idle polling"].tune.startswith("yes: guest_halt_poll_ns = 200000")
    assert by_name["isolated CPUs"].now == "none"
