"""Whatever `msgbench export` writes, `msgbench import` and the results page read back."""

import pytest

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.views.formats import registry
from msgbench.views.web import shape

# What each format carries of a measurement (the OTP format: one figure per point).
LOSSLESS = {"json", "csv", "md"}


def run_cli(*args) -> int:
    return main(list(args))


@pytest.fixture
def stored_run(fake_targets, capsys):
    """A fanin run of the fake target (every format, OTP's included, can hold fanin)."""
    assert run_cli("run", "fanin", "--target", "fake", "--sweep", "senders=1,2", "--repeat", "2",
                   "--no-build") == 0
    capsys.readouterr()
    store = Store(fake_targets)
    run_id = store.runs()[0]["id"]
    return store, run_id


def test_every_format_export_writes_has_a_reader():
    assert set(registry.names()) == {"json", "csv", "md", "otp"}


@pytest.mark.parametrize("fmt", registry.names())
def test_an_export_imports_back_into_another_store(stored_run, fmt, tmp_path, capsys):
    store, run_id = stored_run
    exported = tmp_path / f"run.{fmt}"
    assert run_cli("export", run_id, "--format", fmt, "-o", str(exported)) == 0
    other = tmp_path / "other.sqlite"
    assert run_cli("--store", str(other), "import", str(exported)) == 0
    assert "imported run" in capsys.readouterr().out
    back = Store(other)
    (imported,) = back.runs()
    measured = [m for m in back.measurements(imported["id"]) if not m["warmup"]]
    original = [m for m in store.measurements(run_id) if not m["warmup"]]
    if fmt in LOSSLESS:
        assert imported["id"] == run_id
        key = ("scenario", "workload", "target", "variant", "params", "repetition", "status", "metrics")
        assert [{k: m[k] for k in key} for m in measured] == [{k: m[k] for k in key} for m in original]
    else:  # one figure per point: the medians of the send and receive throughput
        assert {m["x"] for m in measured} == {m["x"] for m in original}
        assert all("send_throughput_per_s" in m["metrics"] for m in measured)


@pytest.mark.parametrize("fmt", registry.names())
def test_the_results_page_reads_every_export(stored_run, fmt, capsys):
    _, run_id = stored_run
    assert run_cli("export", run_id, "--format", fmt) == 0
    source = shape.parse_text(capsys.readouterr().out, "pasted")
    titles = {g["title"] for g in source["graphs"]}
    assert any(t.startswith("parallel_signal_send") or "Throughput" in t for t in titles), titles


def test_markdown_keeps_its_document_out_of_sight_and_safe(stored_run, capsys):
    _, run_id = stored_run
    assert run_cli("export", run_id, "--format", "md") == 0
    text = capsys.readouterr().out
    visible, _, comment = text.partition("<!-- " + "msgbench-results-document")
    assert "| scenario |" in visible
    assert comment.count("-->") == 1 and comment.rstrip().endswith("-->")
    assert run_cli("show", run_id, "--format", "md") == 0
    assert "msgbench-results-document" not in capsys.readouterr().out  # the terminal gets the table only


def test_a_note_cannot_close_the_markdown_comment():
    from msgbench.views.formats import markdown

    doc = {"format": "msgbench-results", "version": 1, "runs": [{
        "id": "r1", "created_at": "2026-11-25T00:00:00+00:00", "status": "complete", "command": "x",
        "notes": ["--> <script>alert(1)</script> & more"], "metadata": {}, "summary": [],
        "measurements": []}]}
    text = markdown.render(doc)
    comment = text[text.index("<!-- msgbench-results-document"):]
    assert "<script>" not in comment and comment.count("-->") == 1
    assert registry.read(text, "pasted")["runs"][0]["notes"] == doc["runs"][0]["notes"]


@pytest.mark.parametrize("text, words", [
    ("", "the input is empty"),
    ("hello there", "cannot tell the format"),
    ("# msgbench run x\n\n| a |\n", "cannot tell the format"),
    ("run_id,scenario\n", "expected column 'workload'"),
    ("<!-- msgbench-results-document\n{\"format\": 1}\n-->", "not a msgbench results document"),
])
def test_what_no_reader_takes_is_refused_in_one_line(text, words):
    with pytest.raises(registry.FormatError, match=words) as err:
        registry.read(text, "pasted")
    assert "\n" not in str(err.value)
