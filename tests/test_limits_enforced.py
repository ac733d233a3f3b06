"""Limits the user sets are limits, enforced before anything runs or is written (issue 30):
a workload's own time floor never raises the user's --timeout, --max-repeat has a
ceiling, an invalid --precision writes no build's folder."""

import shutil

import pytest

from msgbench import cli
from msgbench.cli import main

CHAT = ["run", "chat", "--target", "fake", "--variant", "chat_ok", "-p", "server=ws", "-p", "groups=2",
        "-p", "clients_per_group=2", "--repeat", "1", "--warmup", "0", "--no-build"]


class Reached(Exception):
    pass


@pytest.fixture
def planned(monkeypatch) -> list:
    """The plans that reached execute (which then stops): none if the run was refused."""
    plans = []

    def execute(plan, store, suite, **beside):
        plans.append(plan)
        raise Reached

    monkeypatch.setattr(cli, "execute", execute)
    return plans


def test_the_chat_server_kind_never_raises_the_users_timeout(fake_targets, planned, capsys):
    assert main([*CHAT, "-p", "duration_s=86400", "--timeout", "5"]) == 2
    assert planned == []
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "needs a time limit of at least 86," in err[0] and "--timeout 5 allows less" in err[0]


def test_a_timeout_that_covers_the_point_is_kept_as_given(fake_targets, planned):
    with pytest.raises(Reached):
        main([*CHAT, "-p", "duration_s=1", "--timeout", "500"])
    assert [job.timeout_s for job in planned[0].jobs] == [500]


def test_without_a_timeout_the_point_gets_what_it_needs(fake_targets, planned):
    with pytest.raises(Reached):
        main([*CHAT, "-p", "duration_s=3000"])
    assert planned[0].jobs[0].timeout_s > 3000


RING = ["run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "3", "--warmup", "0", "--no-build"]


@pytest.mark.parametrize("value", ["0", "-1", "1001", "100000000"])
def test_max_repeat_is_bounded(fake_targets, planned, capsys, value):
    assert main([*RING, "--precision", "2%", "--max-repeat", value]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"--max-repeat {value} is out of range: it takes 1 to 1,000" in err[0], err
    assert planned == []


def test_an_invalid_precision_writes_no_build_folder(fake_targets, planned, tmp_path, capsys):
    folder = tmp_path / "toolchain"
    folder.mkdir()
    (folder / "python3").symlink_to(shutil.which("python3"))  # a build folder holding the fake's runtime
    for precision, max_repeat in (("0%", "30"), ("2%", "2")):
        assert main([*RING, "--build", f"fake:other={folder}", "--precision", precision,
                     "--max-repeat", max_repeat]) == 2
        assert not (tmp_path / "builds").exists(), "a build's folder was written before the refusal"
    assert planned == []
    capsys.readouterr()
    # The same build with a valid --precision does get its folder: the check above can fail.
    with pytest.raises(Reached):
        built = [a for a in RING if a != "--no-build"]  # a build's copy is built before it runs (or refused)
        main([*built, "--build", f"fake:other={folder}", "--precision", "2%"])
    assert (tmp_path / "builds").exists()
