"""What the user is told (issue 30): bidirectional controls in stored labels escaped
before the terminal, a bad option in one line, an OTP export of nothing OTP-shaped an
error, `serve` on a broken store saying so, --remote-dir a path on the remote only."""

import json
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.request

import pytest

from msgbench import cli  # cli first: msgbench.views.web alone imports in a cycle
from msgbench.core import terminal  # cli first: msgbench.views.web alone imports in a cycle
from msgbench.core.paths import REPO_ROOT
from msgbench.data.store import Store
from msgbench.hosts import placement  # cli first: msgbench.views.web alone imports in a cycle
from msgbench.views.web.server import make_server
from msgbench.workers import targets  # cli first: msgbench.views.web alone imports in a cycle
from tests.test_store_reliability import imported, measurement

PYTHON = sys.executable
RLO = "\u202e"


def msgbench(store, *args) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "msgbench", "--store", str(store), *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60)


def test_bidi_controls_are_shown_as_escapes():
    assert terminal.safe(f"otp{RLO}52 \u2066x\u2069 \u200f") == "otp\\u202e52 \\u2066x\\u2069 \\u200f"
    assert terminal.safe("Привет, עולם ✓") == "Привет, עולם ✓"  # right-to-left text itself is kept


def test_a_build_label_with_a_right_to_left_override_reaches_the_terminal_escaped(tmp_path):
    m = measurement(1) | {"build": f"evil{RLO}gnp.exe", "variant_label": f"idiomatic{RLO}"}
    store = Store(tmp_path / "s.sqlite")
    store.import_run(imported("20261122-090000-aaaa", [m]), "a.json")
    store.close()
    for command in (["show", "latest"], ["history"], ["show", "latest", "--wide"]):
        proc = msgbench(tmp_path / "s.sqlite", *command)
        assert proc.returncode == 0, proc.stderr
        assert RLO not in proc.stdout + proc.stderr, command
    assert "evil\\u202egnp.exe" in msgbench(tmp_path / "s.sqlite", "show", "latest").stdout


@pytest.mark.parametrize("args", [["run", "ring", "--timeout", "x"], ["run", "ring", "--timeout", "-3"],
                                  ["run", "ring", "--timeout", "nan"], ["run", "ring", "--repeat", "two"]])
def test_a_bad_option_is_one_line_not_the_usage(tmp_path, args):
    proc = msgbench(tmp_path / "s.sqlite", *args)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert args[2] in lines[0] and "msgbench run --help" in lines[0]


def test_export_otp_of_a_run_with_no_fanin_is_an_error(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    store.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "a.json")  # a ring run
    store.close()
    proc = msgbench(tmp_path / "s.sqlite", "export", "latest", "--format", "otp")
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "20261122-090000-aaaa: no fanin results" in lines[0], proc.stderr
    assert msgbench(tmp_path / "s.sqlite", "export", "latest", "--format", "json").returncode == 0


def test_serve_on_a_broken_store_says_so_at_once(tmp_path):
    broken = tmp_path / "s.sqlite"
    broken.write_bytes(b"this is no database\n" * 100)
    proc = msgbench(broken, "serve", "--port", "0")
    assert proc.returncode == 2
    assert "is not a msgbench store" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_store_broken_while_served_is_a_server_fault_not_no_such_run(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    store = Store(path)
    store.import_run(imported("20261122-090000-aaaa", [measurement(1)]), "a.json")
    store.close()
    served = {}

    def serve(host, port, list_runs, load_run):
        served["list_runs"], served["load_run"] = list_runs, load_run

    monkeypatch.setattr("msgbench.views.web.serve", serve)
    assert cli.main(["--store", str(path), "serve", "--port", "0"]) == 0
    server = make_server("127.0.0.1", 0, served["list_runs"], served["load_run"])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_port}"
    try:
        with urllib.request.urlopen(f"{base}/api/runs/20261122-090000-aaaa", timeout=10) as answer:
            assert answer.status == 200
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(f"{base}/api/runs/nosuch", timeout=10)
        assert caught.value.code == 404
        path.write_bytes(b"garbage, not a database\n" * 200)  # damaged under the server
        for page in ("/api/runs/20261122-090000-aaaa", "/api/runs"):
            with pytest.raises(urllib.error.HTTPError) as caught:
                urllib.request.urlopen(base + page, timeout=10)
            assert caught.value.code == 503, page
            message = json.loads(caught.value.read())["error"]["message"]
            assert "not a msgbench store" in message and "no such run" not in message
    finally:
        server.shutdown()
        server.server_close()


def test_remote_dir_need_not_exist_here(fake_targets):
    t = targets.target("fake")
    there = "/opt/only-on-the-remote/msgbench/targets/fake"
    assert not os.path.exists(there)
    peers = placement.Peers([], remote="bench@192.0.2.7", remote_dir=there)
    peers._remote_resolved = "192.0.2.7"  # no ssh -G for a documentation address
    env = peers.env_for(t, t.variants["ok"], {"placement": "remote"}, 1024, "socket")
    assert os.path.isdir(env["MSGBENCH_PEER_CWD"])  # where the local ssh starts
    command = json.loads(env["MSGBENCH_PEER_COMMAND"])
    assert command[command.index("cd") + 1] == there
