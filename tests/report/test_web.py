"""The results page's server: reading pasted text into graphs, and its HTTP API."""

import json
import threading
import urllib.error
import urllib.request

import pytest

from msgbench.views.formats import csvfmt, otp
from msgbench.views.web import make_server, shape

SEND_1_KEY = ("otp|Scenario: Send Throughput, send_duration=1000 ms, 100.000000% {message_size,1}, "
              "Spawn Options=[{message_queue_data,off_heap}]")


def graph(source, key):
    return next(g for g in source["graphs"] if g["key"] == key)


def test_a_json_document_becomes_graphs_keyed_by_scenario(one_run):
    source = shape.parse_text(json.dumps(one_run), "mine")
    assert (source["name"], source["format"]) == ("mine", "msgbench-json")
    send = graph(source, SEND_1_KEY)
    assert send["primary"] and send["better"] == "higher"
    assert [s["label"] for s in send["series"]] == ["erlang/default", "go/default", "c/default"]
    primaries = [g for g in source["graphs"] if g["primary"]]
    # fanin: 2 scenarios x send/receive; ring: hops/s per m; socket: its primary metric
    assert len(primaries) == 4 + 2 + 1
    ring = next(g for g in primaries if g["key"].startswith("ring|"))
    assert ring["x_label"] == "n" and ring["subtitle"] == "m=10, payload=BOO!"
    # socket echo is shown as its round trip, as in the report, never as "bandwidth".
    [socket] = [g for g in primaries if g["key"].startswith("socket|")]
    assert socket["y_label"] == "round trip (µs)" and socket["better"] == "lower"


def test_every_series_carries_its_targets_colour_also_from_otp_text(one_run):
    from msgbench.views import figures
    for source in (shape.parse_text(json.dumps(one_run), "a"),
                   shape.parse_text(otp.render(one_run), "b")):
        send = graph(source, SEND_1_KEY)
        assert [s["colour"] for s in send["series"]] == [
            figures.TARGET_COLOURS[t] for t in ("erlang", "go", "c")]


def test_csv_and_otp_of_the_same_run_give_the_same_fanin_numbers(one_run):
    from_json = graph(shape.parse_text(json.dumps(one_run), "a"), SEND_1_KEY)
    from_csv = graph(shape.parse_text(csvfmt.render(one_run), "b"), SEND_1_KEY)
    from_otp = graph(shape.parse_text(otp.render(one_run), "c"), SEND_1_KEY)
    for other in (from_csv, from_otp):
        for a, b in zip(from_json["series"], other["series"], strict=True):
            assert a["label"] == b["label"] and a["status"] == b["status"]
            assert a["y"] == pytest.approx(b["y"], abs=1e-6)


@pytest.mark.parametrize(("text", "fmt", "line", "column", "expected"), [
    ("", None, 1, 1, "the input is empty"),
    ("hello", None, 1, 1, "cannot tell the format"),
    ('{"format": "msgbench-results",\n "runs": [}', "json", 2, 11, "invalid JSON"),
    ('{"format": "other"}', "json", None, None, "not a msgbench results document"),
    ("run_id,scenario\n", "csv", 1, 3, "expected column 'workload'"),
    ("Scenario: X$\n; 1$\nv; x$", "otp", 3, 4, "expected a number"),
])
def test_unreadable_input_says_where(text, fmt, line, column, expected):
    with pytest.raises(shape.InputError) as caught:
        shape.parse_text(text, "paste")
    error = caught.value.as_json()
    assert (error["format"], error["line"], error["column"]) == (fmt, line, column)
    assert expected in error["message"]


def test_a_pasted_summary_is_recomputed_not_read(one_run):
    expected = shape.parse_text(json.dumps(one_run), "paste")
    del one_run["runs"][0]["summary"][3]["target"]  # broken, and never read (issue 30)
    assert shape.parse_text(json.dumps(one_run), "paste")["graphs"] == expected["graphs"]


# ---------------------------------------------------------------- HTTP


@pytest.fixture
def server(two_runs):
    runs = {run["id"]: {"format": "msgbench-results", "version": 1, "runs": [run]}
            for run in two_runs["runs"]}

    def list_runs():
        return [{"id": k, "created_at": "2026-11-22T05:15:00+00:00", "command": "msgbench run",
                 "suite": "quick", "status": "complete", "extra": "not shown"} for k in runs]

    srv = make_server("127.0.0.1", 0, list_runs, lambda run_id: runs[run_id])
    thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{srv.server_port}"
    srv.shutdown()
    srv.server_close()


def fetch(url, data=None, headers=None):
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_the_page_and_its_files_are_served_with_a_strict_policy(server):
    status, headers, body = fetch(server + "/")
    assert status == 200 and b"msgbench results" in body
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"
    for name in ("plot.js", "page.js", "plot.css", "page.css"):
        status, headers, body = fetch(f"{server}/static/{name}")
        assert status == 200 and body
    assert fetch(server + "/static/../server.py")[0] == 404


def test_runs_in_the_store_are_listed_and_loaded(server, two_runs):
    status, _, body = fetch(server + "/api/runs")
    runs = json.loads(body)
    assert status == 200 and [r["id"] for r in runs] == [r["id"] for r in two_runs["runs"]]
    assert set(runs[0]) == {"id", "created_at", "command", "suite", "status"}
    status, _, body = fetch(f"{server}/api/runs/{runs[1]['id']}")
    source = json.loads(body)
    assert status == 200 and source["name"] == runs[1]["id"] and source["graphs"]
    assert fetch(server + "/api/runs/nope")[0] == 404


def test_parse_answers_graphs_or_an_error_with_line_and_column(server, one_run):
    headers = {"Content-Type": "application/json"}
    body = json.dumps({"text": otp.render(one_run), "name": "Ver: 1"}).encode()
    status, _, answer = fetch(server + "/api/parse", body, headers)
    assert status == 200 and json.loads(answer)["format"] == "otp"
    body = json.dumps({"text": "Scenario: X$\n; 1$\nv; x$", "name": "Ver: 2"}).encode()
    status, _, answer = fetch(server + "/api/parse", body, headers)
    error = json.loads(answer)["error"]
    assert status == 400 and (error["line"], error["column"]) == (3, 4)
    assert error["message"].startswith("line 3, column 4: expected a number")
    # Raw text works too (curl --data-binary @results.csv).
    status, _, answer = fetch(server + "/api/parse", csvfmt.render(one_run).encode(),
                              {"Content-Type": "text/plain"})
    assert status == 200 and json.loads(answer)["format"] == "csv"


def test_requests_for_another_host_are_refused_on_loopback(server):
    status, _, _ = fetch(server + "/api/runs", headers={"Host": "evil.example:80"})
    assert status == 403
    assert fetch(server + "/", headers={"Host": "localhost:1234"})[0] == 200
