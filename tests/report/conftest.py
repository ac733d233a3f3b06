"""Fixtures of the report and results-page tests: generated documents and a browser."""

import copy
import shutil
from pathlib import Path

import pytest

from tests.report.report_fixtures import make_doc

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="session")
def _docs() -> dict:
    return {1: make_doc(1), 2: make_doc(2), "all": make_doc(2, with_more=True)}


@pytest.fixture
def one_run(_docs) -> dict:
    """One run: ring, fanin and socket, three targets, a failed and an unsupported point."""
    return copy.deepcopy(_docs[1])


@pytest.fixture
def two_runs(_docs) -> dict:
    """The same scenarios measured twice (the second run slower)."""
    return copy.deepcopy(_docs[2])


@pytest.fixture
def every_workload(_docs) -> dict:
    """Two runs with a section for each of ring, fanin, socket, pubsub and chat."""
    return copy.deepcopy(_docs["all"])


@pytest.fixture(scope="session")
def browser_context(tmp_path_factory):
    """Debian's chromium, headless, with a fresh profile; skipped only when it is absent.

    The profile is in pytest's own temporary directory, not a mkdtemp of its own: a run
    killed before the end leaves it where pytest removes it (it keeps the last three
    sessions' directories), never in /tmp for good."""
    if not CHROMIUM.exists():
        pytest.skip(f"chromium is not installed at {CHROMIUM} (apt-get install -y chromium)")
    from playwright.sync_api import sync_playwright

    profile = tmp_path_factory.mktemp("chromium-profile")
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 900})
        try:
            yield context
        finally:
            context.close()
    shutil.rmtree(profile, ignore_errors=True)  # large, and of no use once the session ends


@pytest.fixture
def page(browser_context):
    """A fresh tab that fails the test on any script error or console error."""
    tab = browser_context.new_page()
    problems: list[str] = []
    tab.on("pageerror", lambda err: problems.append(f"page error: {err}"))
    tab.on("console", lambda msg: problems.append(f"console {msg.type}: {msg.text}")
           if msg.type == "error" else None)
    tab.problems = problems
    yield tab
    tab.close()


@pytest.fixture
def screenshot_dir(tmp_path) -> Path:
    """Where screenshots go: $MSGBENCH_SCREENSHOTS if set (to look at them), else tmp."""
    import os

    folder = Path(os.environ.get("MSGBENCH_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
