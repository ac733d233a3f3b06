"""What goes out: no control sequence reaches the terminal, CSV cannot run formulas,
Markdown cannot carry HTML, `msgbench serve` answers every bad request with a JSON
reason (never a traceback), and a closed pipe ends msgbench quietly."""

import contextlib
import csv
import io
import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from msgbench.core import terminal
from msgbench.core.paths import REPO_ROOT
from msgbench.views.formats import csvfmt, markdown

PYTHON = sys.executable
HOSTILE = ["\x1b]52;c;ZWNobyBwd25lZA==\x07", "\x1b]0;owned\x07", "\x1b[2J\x1b[H", "\x9b2J", "bell\x07", "del\x7f"]


def msgbench(store, *args, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "msgbench", "--store", str(store), *args], cwd=REPO_ROOT,
                          capture_output=True, timeout=60, **kwargs)


def hostile_document() -> dict:
    m = {"scenario": "ring" + HOSTILE[0], "workload": "ring", "target": "fake" + HOSTILE[1],
         "variant": "ok" + HOSTILE[2], "params": {"n": 10, "label": HOSTILE[3]}, "repetition": 1,
         "status": "ok", "error": HOSTILE[4], "metrics": {"hops_per_s": 5.0}, "verify": {"hops": 10}}
    return {"format": "msgbench-results", "version": 1, "runs": [{
        "id": "20261122-090000-aaaa", "created_at": "2026-11-22T09:00:00+00:00", "status": "complete",
        "command": "msgbench run " + HOSTILE[0], "notes": HOSTILE, "suite": HOSTILE[5],
        "metadata": {"cpu_model": HOSTILE[1], "runtimes": {"go": HOSTILE[2]}}, "measurements": [m]}]}


@pytest.fixture
def hostile_store(tmp_path):
    (tmp_path / "doc.json").write_text(json.dumps(hostile_document()))
    store = tmp_path / "s.sqlite"
    assert msgbench(store, "import", str(tmp_path / "doc.json")).returncode == 0
    return store


# ---------------------------------------------------------------- the terminal


@pytest.mark.parametrize("command", [["history"], ["show", "latest"], ["show", "latest", "--format", "seed"],
                                     ["compare", "latest", "latest"], ["logs", "latest"]])
def test_stored_strings_reach_the_terminal_without_control_sequences(hostile_store, command):
    proc = msgbench(hostile_store, *command)
    for stream in (proc.stdout, proc.stderr):
        assert not re.search(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", stream), stream[:500]
    if command[0] in ("history", "show"):
        assert b"\\x1b" in proc.stdout  # shown, not dropped: the user can see something odd was stored


def test_safe_keeps_text_and_shows_controls():
    assert terminal.safe("ring\tn=10\nok ✓") == "ring\tn=10\nok ✓"
    assert terminal.safe("\x1b]0;x\x07\x9b\x7f") == "\\x1b]0;x\\x07\\x9b\\x7f"


# ---------------------------------------------------------------- CSV and Markdown


def test_csv_cells_cannot_run_formulas_but_numbers_stay_numbers():
    doc = hostile_document()
    m = doc["runs"][0]["measurements"][0]
    m.update(target="=HYPERLINK(\"http://x\",\"y\")", variant="+1", error="@SUM(A1)", scenario="-2+3",
             metrics={"hops_per_s": 5.0, "delta": -7.5}, verify={"hops": -1, "netns": "=cmd|' /C calc'!A0"})
    text = csvfmt.render(doc)
    header, row = list(csv.reader(io.StringIO(text)))
    cells = dict(zip(header, row, strict=True))
    for name in ("target", "variant", "error", "scenario", "verify:netns"):
        assert cells[name].startswith("'"), (name, cells[name])
    assert cells["metric:delta"] == "-7.5" and cells["verify:hops"] == "-1"
    back = csvfmt.parse(text)["runs"][0]["measurements"][0]
    assert back["target"] == m["target"] and back["error"] == "@SUM(A1)" and back["metrics"]["delta"] == -7.5


def test_markdown_escapes_html_and_table_pipes():
    doc = hostile_document()
    run = doc["runs"][0]
    run["notes"] = ["<img src=x onerror=alert(1)>", "a | b"]
    run["command"] = "msgbench run `ring` <b>"
    run["summary"] = [{"scenario": "ring", "workload": "ring", "target": "<script>x</script>", "variant": "a|b",
                       "variant_label": "idiomatic", "params": {"n": 10}, "sweep": None, "x": None, "status": "ok",
                       "ok": 1, "total": 1, "metrics": {}, "warnings": ["<i>w</i>"]}]
    text = markdown.render(doc)
    assert "<img" not in text and "<script>" not in text and "<i>" not in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text and "&lt;script&gt;x&lt;/script&gt;" in text
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert table and all(line.count(" | ") == table[0].count(" | ") for line in table)
    assert "`` msgbench run `ring` <b> ``" in text


# ---------------------------------------------------------------- msgbench serve


@pytest.fixture
def server(tmp_path):
    proc = subprocess.Popen([PYTHON, "-m", "msgbench", "--store", str(tmp_path / "s.sqlite"), "serve", "--port", "0"],
                            cwd=REPO_ROOT, stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    port = int(re.search(r":(\d+)/", line).group(1))
    yield proc, port
    proc.terminate()
    proc.wait(timeout=10)


def raw_request(port: int, data: bytes) -> tuple[int, dict]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(data)
        with contextlib.suppress(OSError):
            s.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    response = b"".join(chunks)
    head, _, body = response.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, json.loads(body)


JSON = "Content-Type: application/json\r\n"


def post(body: bytes, headers: str = "", length: str | None = "") -> bytes:
    """A POST of body; Content-Length is right unless given (None: left out)."""
    length_line = "" if length is None else f"Content-Length: {length or len(body)}\r\n"
    return f"POST /api/parse HTTP/1.1\r\nHost: 127.0.0.1\r\n{length_line}{headers}\r\n".encode() + body


@pytest.mark.parametrize(("request_bytes", "status", "words"), [
    (post(b"x" * 100, length="-1"), 400, "Content-Length '-1' is not a byte count"),
    (post(b"x", length="lots"), 400, "is not a byte count"),
    (post(b"", length=None), 411, "no Content-Length"),
    (post(b"", length=str(9 * 2**20)), 413, "larger than 8 MiB"),
    (post(b"[1]", JSON), 400, 'expected {"text"'),
    (post(b'{"text": 5}', JSON), 400, 'expected {"text"'),
    (post(b'{"text": NaN}', JSON), 400, "NaN is not a number JSON allows"),
    (post(b"[" * 50_000 + b"]" * 50_000), 400, "nested too deeply"),
    (post(b'{"format": "msgbench-results", "version": 1, "runs": [{"id": "x", "created_at": "t", '
          b'"status": "ok", "measurements": [{"scenario": 1, "workload": "ring", "target": "t", "variant": "v", '
          b'"params": {}, "repetition": 1, "status": "ok"}]}]}'), 400,
     "runs[0].measurements[0].scenario: expected a string, got 1"),
    (b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-A: b\r\n" * 200 + b"\r\n", 431, "Too many headers"),
    (b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: " + b"b" * 70000 + b"\r\n\r\n", 431, "Line too long"),
    (b"BREW /pot HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501, "Unsupported method"),
    (b"GET /" + b"a" * 70000 + b" HTTP/1.1\r\n\r\n", 414, ""),
])
def test_every_bad_request_gets_a_json_reason_and_no_traceback(server, request_bytes, status, words):
    proc, port = server
    got, body = raw_request(port, request_bytes)
    assert got == status and words in body["error"]["message"], body
    assert raw_request(port, b"GET /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n") == (200, [])
    proc.terminate()
    _, stderr = proc.communicate(timeout=10)
    assert "Traceback" not in stderr, stderr


# ---------------------------------------------------------------- closed pipes


@pytest.mark.parametrize("command", [["list"], ["history", "--limit", "5000"]])
def test_a_closed_pipe_ends_quietly(tmp_path, command):
    store = tmp_path / "s.sqlite"
    if command[0] == "history":  # enough runs that the output outgrows the pipe's buffer
        doc = hostile_document()
        runs = [dict(doc["runs"][0], id=f"20261122-090000-{i:04x}", measurements=[]) for i in range(3000)]
        (tmp_path / "doc.json").write_text(json.dumps(doc | {"runs": runs}))
        assert msgbench(store, "import", str(tmp_path / "doc.json")).returncode == 0
    reader, writer = os.pipe()
    proc = subprocess.Popen([PYTHON, "-m", "msgbench", "--store", str(store), *command], cwd=REPO_ROOT,
                            stdout=writer, stderr=subprocess.PIPE)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        pipe.readline()  # `| head -1`
    time.sleep(0.2)
    _, stderr = proc.communicate(timeout=60)
    assert stderr == b"", stderr
    assert proc.returncode in (0, 141)
