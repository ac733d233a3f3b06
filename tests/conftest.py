import os
import signal
import uuid
from pathlib import Path

import pytest

from msgbench.workers import targets

FIXTURE_TARGETS = Path(__file__).parent / "fixtures" / "targets"


def pytest_configure(config) -> None:
    """With -n N the tests marked xdist_group("NAME") must run one after another on one
    worker (they share something machine-wide: docs/decisions.md), which only xdist's
    loadgroup scheduling does: `make test-harness` asks for it (--dist loadgroup), and a
    pytest -n without it is refused rather than run those tests side by side."""
    if getattr(config.option, "numprocesses", None) and config.getvalue("dist") != "loadgroup":
        raise pytest.UsageError("the harness tests run side by side only with --dist loadgroup "
                                "(their xdist_group marks keep machine-wide tests apart): add it to -n")
    _take_ctrl_c()


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items) -> None:
    """On an xdist worker under loadgroup, xdist marks each grouped test's id with its group
    (test@netns), which is all its scheduler goes by. pytest 9.2's structured ids make that
    mark silently vanish (pytest-xdist #1386), and the groups' tests then ran side by side:
    refuse to run so rather than find out from a flaky test."""
    if not getattr(config.option, "loadgroup", False):  # only an xdist worker has it
        return
    lost = [item.nodeid for item in items if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        raise pytest.UsageError(f"xdist did not mark {len(lost)} grouped tests with their group (first: "
                                f"{lost[0]}); with this pytest, --dist loadgroup would run them side by side "
                                "(pytest-xdist #1386): use the pytest version constraints.txt pins")


def _take_ctrl_c() -> None:
    """The tests that press Ctrl-C (SIGINT) on a harness or a build they start need it
    heard. A shell runs a command it puts in the background (`make test &`, a CI runner's
    job) with SIGINT ignored, every process below inherits that, and Python then installs
    no KeyboardInterrupt: those tests would wait out their timeouts. Taking SIGINT here
    makes the tests' children start with its default action again (an exec resets a
    handled signal, and keeps an ignored one)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def fake_targets(monkeypatch, tmp_path):
    """The harness pointed at the test-double targets and a store of its own."""
    monkeypatch.setenv("MSGBENCH_TARGETS_DIR", str(FIXTURE_TARGETS))
    monkeypatch.setenv("MSGBENCH_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("MSGBENCH_BUILDS_DIR", str(tmp_path / "builds"))
    targets.registry.cache_clear()
    yield tmp_path / "store.sqlite"
    targets.registry.cache_clear()


def ready_target(name: str) -> targets.Target:
    """A real target, built; skipped when its runtime is missing (failed instead where
    MSGBENCH_REQUIRE_ALL_TARGETS says every target must run, as in CI)."""
    t = targets.target(name)
    missing = t.missing_requirements()
    if missing:
        message = f"{name} needs {', '.join(missing)}: {t.install_command()}"
        if os.environ.get("MSGBENCH_REQUIRE_ALL_TARGETS"):
            pytest.fail(message)
        pytest.skip(message)
    build_once(t)
    return t


_built: set[tuple[str, str]] = set()


def build_once(t: targets.Target) -> None:
    """Build a target the first time a test of this process asks for it: its build is a
    make that finds nothing to do once it has run (go relinks, node checks every source),
    and hundreds of conformance cases asked for it again, each a second or more of CPU."""
    key = (str(t.folder), t.build)
    if key not in _built:
        targets.build(t)
        _built.add(key)


MARKER = "MSGBENCH_TEST_MARKER"


@pytest.fixture(autouse=True)
def work_as_asked(monkeypatch) -> None:
    """Tests run each point's work as they give it (--min-time's default is 0.5 s, which
    would make every small test point a half-second one); calibration's own tests set it."""
    monkeypatch.setenv("MSGBENCH_MIN_TIME", "0")


@pytest.fixture(autouse=True)
def test_marker(monkeypatch) -> str:
    """A mark in the environment of every process this test starts (workers and what they
    spawn inherit it), so that a check for leftovers sees this test's processes only,
    never those of another run on the same machine."""
    marker = uuid.uuid4().hex
    monkeypatch.setenv(MARKER, marker)
    return marker


def marked_command_lines(marker: str) -> dict[int, str]:
    """pid -> command line of every live process whose environment carries the marker."""
    wanted = f"{MARKER}={marker}".encode()
    found = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as f:
                environ = f.read().split(b"\0")
            with open(f"/proc/{entry.name}/cmdline", "rb") as f:
                cmdline = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        if wanted in environ:
            found[int(entry.name)] = cmdline
    return found


def processes_matching(fragment: str) -> list[str]:
    """Command lines of this test's running processes (marked) that contain fragment."""
    return [cmd for cmd in marked_command_lines(os.environ[MARKER]).values() if fragment in cmd]
