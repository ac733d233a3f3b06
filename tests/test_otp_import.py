"""What the OTP suite really prints, read by `msgbench import` and the results page alike:
large_throughput_benchmark's raw output, whose `#Name:` notes break a result row over
several lines, and several runs pasted one after another with the same label."""

from msgbench.cli import main
from msgbench.data.store import Store
from msgbench.views.formats import otp, registry
from msgbench.views.web import shape

SEND = ("Scenario: Send Throughput, send_duration=1000 ms,  100.000000% {exit_signal_size,1}, "
        "Spawn Options=[{message_queue_data,off_heap}]$")
RECEIVE = SEND.replace("Send Throughput", "Receive Throughput")


def raw_run(label: str, send: list[float], receive: list[float]) -> str:
    """One run as large_throughput_benchmark prints it: each value on its own line, a
    `#Name:` note after it, the row's `$` only after the last."""
    def graph(title, values):
        lines = [title, "; 1; 2; 4$"]
        for senders, value in zip((1, 2, 4), values, strict=True):
            lines += [f"{label if senders == 1 else ''}; {value:f}", "",
                      f"#Name: Scenario: [{{1.0,{{exit_signal_size,1}}}}], # of Processes: {senders} "
                      f"Throughput: {value}", ""]
        return [*lines, "$"]
    return "\n".join(["# Each instance of the benchmark runs for 1.0 seconds:", "#BENCHMARK STARTED$",
                      *graph(SEND, send), *graph(RECEIVE, receive), "#BENCHMARK ENDED$", ""])


FIRST = raw_run("25", [2279779.33, 3521138.33, 3084193.33], [2235178.0, 2157118.04, 2493812.31])
SECOND = raw_run("25", [1000.0, 2000.0, 3000.0], [900.0, 1900.0, 2900.0])


def test_a_row_broken_over_lines_by_name_notes_is_one_row():
    send, receive = otp.parse(FIRST)
    assert send["x"] == [1, 2, 4]
    assert send["rows"] == [{"label": "25", "values": [2279779.33, 3521138.33, 3084193.33], "status": ["ok"] * 3}]
    assert receive["rows"][0]["values"] == [2235178.0, 2157118.04, 2493812.31]


def test_an_error_in_a_broken_row_names_its_own_line():
    text = FIRST.replace("; 3521138.330000", "; 35x1138")
    try:
        otp.parse(text)
    except otp.ParseError as err:
        assert err.line == 1 + text.splitlines().index("; 35x1138")
        assert err.column == 3
        assert "found '35x1138'" in err.reason
    else:
        raise AssertionError("a bad number was read")


def test_two_runs_with_the_same_label_stay_two_runs_when_imported(fake_targets, tmp_path, capsys):
    pasted = tmp_path / "two-runs.txt"
    pasted.write_text(FIRST + "\n" + SECOND)
    assert main(["import", str(pasted)]) == 0
    assert capsys.readouterr().out.count("imported run ") == 2
    store = Store(fake_targets)
    runs = {r["id"]: store.measurements(r["id"]) for r in store.runs()}
    sends = sorted(sorted(m["metrics"]["send_throughput_per_s"] for m in ms) for ms in runs.values())
    assert sends == [[1000.0, 2000.0, 3000.0], [2279779.33, 3084193.33, 3521138.33]]


def test_the_page_keeps_a_second_run_of_a_label_as_its_own_series():
    source = shape.parse_text(FIRST + SECOND, "pasted")
    send = source["graphs"][0]
    assert len(source["graphs"]) == 2  # send and receive, each with both runs
    assert [s["label"] for s in send["series"]] == ["25", "25 (run 2)"]


def test_import_and_the_page_read_the_same_formats():
    assert set(registry.names()) == {"json", "csv", "md", "otp"}
    assert registry.sniff(FIRST).name == "otp"


def test_an_imported_run_shows_its_machine_as_unknown_in_words(fake_targets, tmp_path, capsys):
    pasted = tmp_path / "one-run.txt"
    pasted.write_text(FIRST)
    main(["import", str(pasted)])
    capsys.readouterr()
    assert main(["show", "latest"]) == 0
    out = capsys.readouterr().out
    assert "machine: unknown machine (imported without its metadata)" in out
    assert "None" not in out
    assert main(["history"]) == 0
    assert "unknown" in capsys.readouterr().out
