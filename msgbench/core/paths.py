"""Where msgbench finds its spec, suites and targets, and where it keeps results.

The harness runs from a checkout: the spec, suites and targets folders sit beside
the package. Environment variables let tests point the harness at fixture targets
and a temporary store without touching the user's.
"""

import os
from pathlib import Path

import msgbench

# The checkout: the folder that holds the package, wherever in it this module sits.
REPO_ROOT = Path(msgbench.__file__).resolve().parent.parent
SPEC_DIR = REPO_ROOT / "spec"
SUITES_DIR = REPO_ROOT / "suites"


def targets_dir() -> Path:
    return Path(os.environ.get("MSGBENCH_TARGETS_DIR", REPO_ROOT / "targets"))


def builds_dir() -> Path:
    """Where each build of a target that compiles apart gets its own folder."""
    return Path(os.environ.get("MSGBENCH_BUILDS_DIR", REPO_ROOT / "results" / "builds"))


def default_store_path() -> Path:
    return Path(os.environ.get("MSGBENCH_STORE", REPO_ROOT / "results" / "msgbench.sqlite"))
