"""The results page trusts nothing it is given (issue 30): a pasted document's summary
is recomputed from its measurements, a Markdown file with two embedded documents is
refused on the page and by `import`, and the page's work, answer and memory are bounded
by limits whatever is pasted."""

import json
import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from msgbench import cli
from msgbench.core.paths import REPO_ROOT
from msgbench.data import results
from msgbench.views.formats import markdown, registry
from msgbench.views.web import shape
from tests.test_store_reliability import imported, measurement

PYTHON = sys.executable


def document(ms: list[dict], run_id: str = "20261122-090000-aaaa") -> dict:
    run = imported(run_id, ms) | {"finished_at": None, "command": "msgbench run ring", "suite": None,
                                  "notes": [], "metadata": {}}
    return {"format": "msgbench-results", "version": 1,
            "runs": [run | {"summary": results.summarize_run([m | {"warmup": False} for m in ms])}]}


def ys(source: dict) -> list:
    return [y for g in source["graphs"] if g["primary"] for s in g["series"] for y in s["y"]]


def labels(source: dict) -> set[str]:
    return {s["label"] for g in source["graphs"] for s in g["series"]}


def test_a_fabricated_summary_is_not_drawn(fake_targets):
    doc = document([measurement(1), measurement(2), measurement(3)])  # hops_per_s 2, 3, 4: median 3
    honest = shape.parse_text(json.dumps(doc), "paste")
    assert ys(honest) == [3.0]
    doc["runs"][0]["summary"] = [{"scenario": "ring", "workload": "ring", "target": "made-up", "variant": "v",
                                  "status": "ok", "params": {"n": 10}, "sweep": None, "x": None, "ok": 3,
                                  "total": 3, "metrics": {"hops_per_s": {"median": 1e12, "n": 3}}}]
    forged = shape.parse_text(json.dumps(doc), "paste")
    assert ys(forged) == [3.0] and "made-up/v" not in labels(forged)


def test_a_summary_median_that_is_no_number_is_never_passed_on(fake_targets):
    doc = document([measurement(1)])
    doc["runs"][0]["summary"] = [{"scenario": "ring", "workload": "ring", "target": "fake", "variant": "ok",
                                  "status": "ok", "metrics": {"hops_per_s": {"median": "fast"}}}]
    source = shape.parse_text(json.dumps(doc), "paste")
    assert "fast" not in json.dumps(source)
    assert all(isinstance(y, (int, float)) or y is None for y in ys(source))


def test_a_summary_without_its_measurements_is_refused(fake_targets):
    doc = document([])
    doc["runs"][0]["summary"] = [{"scenario": "ring", "workload": "ring", "target": "fake", "variant": "ok",
                                  "status": "ok", "metrics": {"hops_per_s": {"median": 5.0}}}]
    with pytest.raises(shape.InputError, match=r"runs\[0\] has a summary but no measurements"):
        shape.parse_text(json.dumps(doc), "paste")


def two_document_markdown() -> str:
    shown = document([measurement(1)])
    hidden = document([measurement(1) | {"metrics": {"hops_per_s": 1e9}}], "20261122-090000-bbbb")
    return (f"<!-- {markdown.EMBED_MARK}\n{json.dumps(hidden)}\n-->\n\n"
            + markdown.render(shown))


def test_markdown_with_two_embedded_documents_is_refused_on_the_page(fake_targets):
    with pytest.raises(shape.InputError, match="holds 2 embedded msgbench documents"):
        shape.parse_text(two_document_markdown(), "paste.md")


def test_markdown_with_two_embedded_documents_is_refused_by_import(fake_targets, tmp_path, capsys):
    (tmp_path / "two.md").write_text(two_document_markdown())
    assert cli.main(["import", str(tmp_path / "two.md")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds 2 embedded msgbench documents" in err[0], err
    assert cli.main(["history"]) == 0
    assert "20261122-090000" not in capsys.readouterr().out


def test_markdown_with_one_document_still_reads(fake_targets):
    assert registry.read(markdown.render(document([measurement(1)])), "x")["runs"][0]["id"] == "20261122-090000-aaaa"


# ---------------------------------------------------------------- bounds


SEND = ("Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {exit_signal_size,1}, "
        "Spawn Options=[{message_queue_data,off_heap}]$")


def otp_rows(count: int, columns: int = 3) -> str:
    header = "".join(f"; {c + 1}" for c in range(columns)) + "$"
    values = "".join(f"; {c + 1}.5" for c in range(columns)) + "$"
    rows = "\n".join(f"label{i}{values}" for i in range(count))
    return f"#BENCHMARK STARTED$\n{SEND}\n{header}\n{rows}\n#BENCHMARK ENDED$\n"


def test_too_many_rows_or_values_are_refused_before_the_work(fake_targets):
    with pytest.raises(shape.InputError, match="1,001 rows: the page draws at most 1,000"):
        shape.parse_text(otp_rows(1001), "paste")
    with pytest.raises(shape.InputError, match="120,000 values: the page draws at most 100,000"):
        shape.parse_text(otp_rows(1000, columns=120), "paste")
    assert len(shape.parse_text(otp_rows(1000), "paste")["graphs"][0]["series"]) == 1000


@pytest.fixture
def served(tmp_path):
    proc = subprocess.Popen([PYTHON, "-m", "msgbench", "--store", str(tmp_path / "s.sqlite"), "serve", "--port", "0"],
                            cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True)
    try:
        port = int(re.search(r":(\d+)/", proc.stderr.readline()).group(1))
        yield proc, f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def paste(url: str, text: str) -> tuple[int, bytes]:
    request = urllib.request.Request(url + "/api/parse", data=text.encode(), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=300) as answer:
            return answer.status, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def peak_rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as f:
        return int(next(line for line in f if line.startswith("VmHWM")).split()[1]) / 1024


def test_large_pastes_get_bounded_answers_and_the_server_stays_bounded(served):
    proc, url = served
    big = otp_rows(999, columns=100)  # the most the page draws, ~0.8 MB
    status, body = paste(url, big)
    assert status == 200 and len(body) < 32 * 2**20
    status, body = paste(url, (big + "\n") * 10)  # ten times over: refused for its rows, not drawn
    assert status == 400 and b"the page draws at most 1,000" in body
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as s:  # over the byte limit: refused unread
        s.sendall(f"POST /api/parse HTTP/1.1\r\nHost: {host}\r\nContent-Length: {9 * 2**20}\r\n\r\n".encode())
        assert b" 413 " in s.recv(65536).split(b"\r\n")[0]
    for _ in range(3):
        assert paste(url, big)[0] == 200
    assert peak_rss_mib(proc.pid) < 512, "the server's memory grew with what was pasted"
