"""An import is whole or not at all, for a document of many runs: run ids that cannot
collide within a paste, every run of a document in one transaction, a collision with
the store refusing the document before anything is written (issue 30)."""

import json

import pytest

from msgbench.cli import main
from msgbench.data import results
from msgbench.data import store as store_module
from msgbench.data.store import Store, StoreError
from msgbench.views.formats import registry
from tests.test_otp_import import FIRST
from tests.test_store_reliability import imported, measurement


def stored_ids(store_path) -> list[str]:
    store = Store(store_path)
    try:
        return sorted(run["id"] for run in store.runs())
    finally:
        store.close()


def test_a_two_thousand_run_otp_paste_is_stored_whole(fake_targets, tmp_path, capsys):
    pasted = tmp_path / "many.txt"
    pasted.write_text("\n".join([FIRST] * 2000))
    assert main(["import", str(pasted)]) == 0
    assert capsys.readouterr().out.count("imported run ") == 2000
    assert len(set(stored_ids(fake_targets))) == 2000


def test_ids_made_together_never_repeat():
    for count in (1, 2_000, 70_000):  # 70,000 is past what 4 hex digits can number
        ids = store_module.new_run_ids(count)
        assert len(set(ids)) == count


def write_document(store_path, run_ids: list[str], path) -> None:
    store = Store(store_path)
    path.write_text(registry.FORMATS["json"].render(results.run_document(store, run_ids)))
    store.close()


def test_a_two_run_json_import_that_collides_stores_neither(fake_targets, tmp_path, capsys):
    source = Store(tmp_path / "source.sqlite")
    source.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "x")
    source.import_run(imported("20261122-090000-bbbb", [measurement(1)]), "x")
    source.close()
    document = tmp_path / "two.json"
    write_document(tmp_path / "source.sqlite", ["20261122-090000-aaaa", "20261122-090000-bbbb"], document)
    store = Store(fake_targets)
    store.import_run(imported("20261122-090000-bbbb", [measurement(7)]), "earlier.json")
    store.close()
    assert main(["import", str(document)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "20261122-090000-bbbb" in err[0] and "nothing was imported" in err[0], err
    assert stored_ids(fake_targets) == ["20261122-090000-bbbb"]  # aaaa, written first, is not kept
    # Retried once the collision is removed, the document goes in whole.
    assert main(["delete", "20261122-090000-bbbb"]) == 0
    assert main(["import", str(document)]) == 0
    assert stored_ids(fake_targets) == ["20261122-090000-aaaa", "20261122-090000-bbbb"]


def test_a_document_holding_one_run_twice_is_refused_whole(fake_targets, tmp_path, capsys):
    source = Store(tmp_path / "source.sqlite")
    source.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "x")
    doc = results.run_document(source, ["20261122-090000-aaaa"])
    doc["runs"] = [doc["runs"][0], json.loads(json.dumps(doc["runs"][0]))]
    document = tmp_path / "twice.json"
    document.write_text(registry.FORMATS["json"].render(doc))
    assert main(["import", str(document)]) == 2
    assert "more than once" in capsys.readouterr().err
    assert stored_ids(fake_targets) == []


def test_an_import_of_two_runs_interrupted_in_the_second_leaves_neither(tmp_path):
    store = Store(tmp_path / "s.sqlite")

    def rows():
        yield measurement(1)
        raise KeyboardInterrupt

    class Interrupted(list):
        def __iter__(self):
            return rows()

    first = imported("20261122-090000-aaaa", [measurement(i) for i in range(50)])
    second = imported("20261122-090000-bbbb", Interrupted())
    with pytest.raises(KeyboardInterrupt):
        store.import_runs([first, second], "two.json")
    assert store.runs() == []
    assert store.db.execute("SELECT COUNT(*) FROM measurements").fetchone()[0] == 0


def test_a_collision_found_in_the_store_is_one_line_naming_the_run(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(imported("20261122-090000-bbbb", []), "a.json")
    with pytest.raises(StoreError, match=r"run 20261122-090000-bbbb is already in .*nothing was imported"):
        store.import_runs([imported("20261122-090000-aaaa", [measurement(1)]),
                           imported("20261122-090000-bbbb", [])], "b.json")
    assert [run["id"] for run in store.runs()] == ["20261122-090000-bbbb"]
