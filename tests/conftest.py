import subprocess
from pathlib import Path

import pytest

from msgbench import targets

FIXTURE_TARGETS = Path(__file__).parent / "fixtures" / "targets"


@pytest.fixture
def fake_targets(monkeypatch, tmp_path):
    """The harness pointed at the test-double targets and a store of its own."""
    monkeypatch.setenv("MSGBENCH_TARGETS_DIR", str(FIXTURE_TARGETS))
    monkeypatch.setenv("MSGBENCH_STORE", str(tmp_path / "store.sqlite"))
    targets.registry.cache_clear()
    yield tmp_path / "store.sqlite"
    targets.registry.cache_clear()


def processes_matching(fragment: str) -> list[str]:
    """Command lines of running processes that contain fragment (this test excluded)."""
    out = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True, check=True).stdout
    return [line for line in out.splitlines()[1:] if fragment in line and "ps -eo" not in line]
