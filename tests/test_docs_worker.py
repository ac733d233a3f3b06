"""docs/targets.md's minimal ring worker is a working target: the walk-through stays true."""

import re

from msgbench.core.paths import REPO_ROOT
from msgbench.data.store import Store
from msgbench.workers import targets
from tests.test_runner import run_cli

TARGET_TOML = """name = "mini"
kind = "runtime"
language = "python"
description = "the minimal ring worker of docs/targets.md"
run = ["python3", "worker.py"]
version = ["python3", "--version"]

[variants.default]
label = "idiomatic"
workloads = ["ring"]
"""


def test_the_minimal_ring_worker_of_the_docs_is_measured_derived_and_verified(tmp_path, monkeypatch):
    text = (REPO_ROOT / "docs" / "targets.md").read_text()
    code = re.search(r"### A minimal ring worker.*?```python\n(.*?)```", text, re.S).group(1)
    folder = tmp_path / "targets" / "mini"
    folder.mkdir(parents=True)
    (folder / "worker.py").write_text(code)
    (folder / "target.toml").write_text(TARGET_TOML)
    monkeypatch.setenv("MSGBENCH_TARGETS_DIR", str(tmp_path / "targets"))
    targets.registry.cache_clear()
    try:
        assert run_cli("--store", str(tmp_path / "s.sqlite"), "run", "ring", "--target", "mini", "-p", "n=50",
                       "-p", "m=4", "--repeat", "1", "--warmup", "0", "--no-build") == 0
    finally:
        targets.registry.cache_clear()
    store = Store(tmp_path / "s.sqlite")
    [measurement] = store.measurements(store.runs()[0]["id"])
    store.close()
    assert measurement["status"] == "ok", measurement["error"]
    assert measurement["verify"] == {"hops": 200, "laps": 4, "links": 50}
    raw = measurement["worker"]["measured"]
    assert measurement["metrics"]["hops_per_s"] == 200 / (raw["pass_wall_ns"] / 1e9)
