"""The store's run references: what `latest` and a prefix resolve to."""

import pytest

from msgbench.data.store import Store, StoreError


def _imported(run_id: str, created_at: str) -> dict:
    return {"id": run_id, "created_at": created_at, "status": "complete", "measurements": []}


def test_latest_is_the_run_stored_last_even_within_one_second(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    second = "2026-11-22T07:15:31+00:00"
    store.import_run(_imported("20261122-071531-fb48", second), "a.json")
    store.import_run(_imported("20261122-071531-7e68", second), "b.json")  # sorts first by id
    assert store.resolve("latest") == "20261122-071531-7e68"


def test_latest_is_an_import_of_an_older_run_when_it_came_last(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(_imported("20261122-090000-aaaa", "2026-11-22T09:00:00+00:00"), "new.json")
    store.import_run(_imported("20250101-000000-bbbb", "2025-01-01T00:00:00+00:00"), "old.json")
    assert store.resolve("last") == "20250101-000000-bbbb"
    assert next(r["id"] for r in store.runs()) == "20261122-090000-aaaa"  # history stays by start time


def test_prefix_must_be_unique(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(_imported("20261122-090000-aaaa", "2026-11-22T09:00:00+00:00"), "a.json")
    store.import_run(_imported("20261122-090000-aabb", "2026-11-22T09:00:00+00:00"), "b.json")
    assert store.resolve("20261122-090000-aab") == "20261122-090000-aabb"
    with pytest.raises(StoreError, match="matches 2 runs"):
        store.resolve("20261122-090000-aa")
