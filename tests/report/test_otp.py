"""The Erlang/OTP benchmark page's `$` format: exact output, real suite input, round trip."""

import pytest

from msgbench.views.formats import otp
from tests.report.report_fixtures import FANIN_SENDERS, MIXED_10

OFF_HEAP = "Spawn Options=[{message_queue_data,off_heap}]"

# What erts' parallel_messages_SUITE prints (its format strings, filled in by hand).
SUITE_OUTPUT = """\
# Each instance of the benchmark runs for 1.0 seconds:
# The result of a benchmark instance is presented as a number representing
# the number of operations performed per second:


# To plot graphs for the results below:
# 1. Open "$ERL_TOP/erts/test/parallel_messages_SUITE_data/visualize_throughput.html" \
in a web browser
# 2. Copy the lines between "#BENCHMARK STARTED$" and "#BENCHMARK ENDED$" below
# 3. Paste the lines copied in step 2 to the text box in the browser window opened in
#    step 1 and press the Render button

#BENCHMARK STARTED$
Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {message_size,1}, \
Spawn Options=[{message_queue_data,off_heap}]$
; 1; 2; 4$
source-2ef0c; 2937402.000000; 3120811.500000; 3011198.250000$
Scenario: Receive Throughput, send_duration=1000 ms,  100.000000% {message_size,1}, \
Spawn Options=[{message_queue_data,off_heap}]$
; 1; 2; 4$
source-2ef0c; 1254300.000000; 1400222.000000; 1388001.125000$
Scenario: Send Throughput, send_duration=1000 ms,  50.000000% {exit_signal_size,1},  \
50.000000% {message_size,1}, Spawn Options=[{message_queue_data,off_heap}]$
; 1; 2; 4$
source-2ef0c; 1937402.000000; 2120811.500000; 2011198.250000$

#BENCHMARK ENDED$

Result Location: //tmp/parallel_messages_SUITE_data/message_bench_result_2026.html
"""


def summary(target, senders, send, receive, *, mix=None, status="ok", **extra):
    params = {"senders": senders, "duration_ms": 1000,
              "mix": mix or [{"percent": 100, "kind": "message", "size": 1}],
              "method": "msgbench", "memory_limit_mb": 8192}
    metrics = {} if status != "ok" else {
        "send_throughput_per_s": {"n": 3, "median": send, "min": send, "max": send},
        "receive_throughput_per_s": {"n": 3, "median": receive, "min": receive, "max": receive}}
    return {"scenario": "fanin", "workload": "fanin", "target": target, "variant": "default",
            "variant_label": "idiomatic", "params": params, "sweep": "senders", "x": senders,
            "status": status, "ok": 3 if status == "ok" else 0, "total": 3, "metrics": metrics,
            "warnings": [], **extra}


def doc_of(*summaries):
    return {"format": "msgbench-results", "version": 1,
            "runs": [{"id": "r1", "measurements": [], "summary": list(summaries)}]}


def test_render_writes_the_suites_exact_bytes():
    doc = doc_of(summary("erlang", 1, 2937402.0, 1000.5), summary("erlang", 2, 3120811.5, 2000.25),
                 summary("go", 1, 5230011.0, 3000.0), summary("go", 2, 6012223.0, 4000.0))
    assert otp.render(doc) == (
        "#BENCHMARK STARTED$\n"
        f"Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {{message_size,1}}, "
        f"{OFF_HEAP}$\n"
        "; 1; 2$\n"
        "erlang/default; 2937402.000000; 3120811.500000$\n"
        "go/default; 5230011.000000; 6012223.000000$\n"
        f"Scenario: Receive Throughput, send_duration=1000 ms,  100.000000% {{message_size,1}}, "
        f"{OFF_HEAP}$\n"
        "; 1; 2$\n"
        "erlang/default; 1000.500000; 2000.250000$\n"
        "go/default; 3000.000000; 4000.000000$\n"
        "#BENCHMARK ENDED$\n")


def test_mixes_list_each_share_as_the_suite_prints_them():
    assert otp.render_mix(MIXED_10) == (" 50.000000% {exit_signal_size,10},"
                                        "  50.000000% {message_size,10}")


@pytest.mark.parametrize(("extra", "options"), [
    ({}, "[{message_queue_data,off_heap}]"),
    ({"spawn_options": "[{message_queue_data,on_heap},{priority,high}]"},
     "[{message_queue_data,on_heap},{priority,high}]"),
])
def test_spawn_options_come_from_the_summary_when_the_worker_reported_them(extra, options):
    title = otp.titles(summary("erlang", 1, 1.0, 1.0, **extra))[otp.SEND]
    assert title.endswith(f"Spawn Options={options}")


def test_a_queue_param_sets_the_spawn_options():
    s = summary("erlang", 1, 1.0, 1.0)
    s["params"]["queue"] = "on_heap"
    assert otp.titles(s)[otp.RECEIVE].endswith("Spawn Options=[{message_queue_data,on_heap}]")


def test_points_without_numbers_are_words_and_all_n_a_rows_are_left_out():
    doc = doc_of(summary("erlang", 1, 10.0, 5.0), summary("erlang", 2, 20.0, 6.0, status="timeout"),
                 summary("go", 1, 0, 0, status="unsupported"),
                 summary("go", 2, 0, 0, status="unsupported"))
    lines = otp.render(doc).splitlines()
    assert "erlang/default; 10.000000; failed$" in lines
    assert not any(line.startswith("go/") for line in lines)


def test_labels_cannot_break_the_format():
    s = summary("er;lang$", 1, 1.0, 1.0)
    assert "er lang /default; 1.000000$" in otp.render(doc_of(s)).splitlines()


def test_round_trip_of_a_generated_run(one_run):
    graphs = otp.parse(otp.render(one_run))
    assert len(graphs) == 4  # two scenarios x send/receive
    by_title = {g["title"]: g for g in graphs}
    for s in one_run["runs"][0]["summary"]:
        if s["workload"] != "fanin":
            continue
        for kind, title in otp.titles(s).items():
            graph = by_title.get(title)
            row = next((r for r in graph["rows"] if r["label"] == f"{s['target']}/{s['variant']}"),
                       None) if graph else None
            if s["target"] == "go" and s["params"]["mix"] == MIXED_10:
                assert row is None  # n/a at every x: left out
                continue
            value = row["values"][graph["x"].index(s["params"]["senders"])]
            if s["status"] == "ok":
                assert value == pytest.approx(s["metrics"][otp.METRICS[kind]]["median"], abs=1e-6)
            else:
                assert value is None
    assert graphs[0]["x"] == list(FANIN_SENDERS)
    assert graphs[0]["throughput"] == "send" and graphs[1]["throughput"] == "receive"
    assert graphs[2]["mix"] == [{"percent": 50.0, "kind": "exit_signal", "size": 10},
                                {"percent": 50.0, "kind": "message", "size": 10}]


def test_parse_reads_the_suites_own_output():
    graphs = otp.parse(SUITE_OUTPUT)
    assert [g["throughput"] for g in graphs] == ["send", "receive", "send"]
    assert graphs[0]["x"] == [1, 2, 4]
    assert graphs[0]["rows"] == [{"label": "source-2ef0c", "status": ["ok"] * 3,
                                  "values": [2937402.0, 3120811.5, 3011198.25]}]
    assert graphs[0]["duration_ms"] == 1000
    assert graphs[0]["spawn_options"] == "[{message_queue_data,off_heap}]"
    assert graphs[2]["mix"][0] == {"percent": 50.0, "kind": "exit_signal", "size": 1}
    assert graphs[1]["line"] == 16


def test_parse_reads_records_on_one_line_and_keeps_n_a_and_failed():
    text = ("Scenario: Send Throughput, send_duration=500 ms,  100.000000% {message_size,1}, "
            "Spawn Options=[]$; 1; 2; 4$a; 1.5; n/a; failed$b; 2; 3$")
    [graph] = otp.parse(text)
    assert graph["rows"][0] == {"label": "a", "values": [1.5, None, None],
                                "status": ["ok", "unsupported", "failed"]}
    # An interrupted suite run prints fewer values: the rest are missing, not zero.
    assert graph["rows"][1]["status"] == ["ok", "ok", "missing"]


def test_text_outside_the_markers_is_ignored():
    text = "garbage before$\n#BENCHMARK STARTED$\n" + SUITE_OUTPUT.split("#BENCHMARK STARTED$\n")[1]
    assert len(otp.parse(text)) == 3


@pytest.mark.parametrize(("text", "line", "column", "expected"), [
    ("", 1, 1, "no 'Scenario:' line"),
    ("; 1; 2$", 1, 1, "expected a 'Scenario:' record"),
    ("Scenario: X$\nv; 1$", 2, 1, "expected the process counts"),
    ("Scenario: X$\n; 1; two$", 2, 6, "expected a process count (a whole number), found 'two'"),
    ("Scenario: X$\n; 1; 0$", 2, 6, "expected a process count >= 1"),
    ("Scenario: X$\n; 1; 2$\nv; 1.0; abc$", 3, 9, "expected a number, 'n/a' or 'failed'"),
    ("Scenario: X$\n; 1$\nv; 1.0; 2.0$", 3, 9, "expected 1 value (one per process count), found 2"),
    ("Scenario: X$\n; 1$\n; 1$", 3, 1, "found a second line of process counts"),
    ("Scenario: X$\n; 1$\nno separator$", 3, 1, "expected '<label>; v1; v2 ...'"),
    ("Scenario: X$\nScenario: Y$", 1, 1, "after this Scenario line"),
    ("Scenario: X$\n; 1$\nv; nan$", 3, 4, "expected a number"),
])
def test_parse_errors_say_the_line_the_column_and_what_was_expected(text, line, column, expected):
    with pytest.raises(otp.ParseError) as caught:
        otp.parse(text)
    assert (caught.value.line, caught.value.column) == (line, column)
    assert expected in str(caught.value)
    assert str(caught.value).startswith(f"line {line}, column {column}: ")


def test_titles_differing_only_in_spacing_are_one_scenario():
    one_space = "Scenario: Send Throughput, send_duration=1000 ms, 100.000000% {message_size,1}"
    two_spaces = "Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {message_size,1}"
    assert otp.graph_key(one_space) == otp.graph_key(two_spaces)
