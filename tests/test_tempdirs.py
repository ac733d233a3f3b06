import os
import subprocess
import tempfile

from msgbench.core import tempdirs

PREFIX = "msgbench-test-tempdirs-"


def dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_directory_is_named_after_its_harness_and_swept_only_once_that_harness_is_gone(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    mine = tempdirs.make(PREFIX, "nats")
    assert mine.name.startswith(f"{PREFIX}{os.getpid()}-nats-")
    assert tempdirs.owner(mine, PREFIX) == os.getpid()
    orphan = tmp_path / f"{PREFIX}{dead_pid()}-redis-abc"
    (orphan / "conf").mkdir(parents=True)
    foreign = tmp_path / f"{PREFIX}redis-abc"  # not made by make(): no owner to ask
    foreign.mkdir()
    assert tempdirs.sweep(PREFIX) == [str(orphan)]
    assert mine.exists() and foreign.exists() and not orphan.exists()
