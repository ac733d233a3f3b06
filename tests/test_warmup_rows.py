"""Nothing vanishes (issue 29): a point stopped at its warm-up — go on a fanin exit-signal
mix answers unsupported there, and the runner measures no repetition after it — keeps
its row, n/a with the target's reason, in the summary every table and chart reads."""

from msgbench.data import results
from msgbench.views import report, screen, tables
from tests.report.report_fixtures import measurement

EXIT = {"senders": 2, "duration_ms": 100, "mix": [{"percent": 100, "kind": "exit_signal", "size": 1}]}
WHY = "exit signals are an Erlang notion; go has no equivalent"


def _measurements(go_status: str = "unsupported") -> list[dict]:
    out = [measurement("r1", "fanin", "fanin", "go", "default", EXIT, "senders", 0, True,
                       status=go_status, error=WHY)]
    for rep in range(4):  # repetition 0 is the warm-up
        out.append(measurement("r1", "fanin", "fanin", "erlang", "default", EXIT, "senders", rep, rep == 0,
                               metrics={"receive_throughput_per_s": 4e5 + rep, "send_throughput_per_s": 5e5}))
    return out


def test_a_target_unsupported_at_its_warm_up_keeps_an_n_a_row():
    summary = results.summarize_run(_measurements())
    go = next(s for s in summary if s["target"] == "go")
    assert go["status"] == "unsupported" and go["error"] == WHY and go["ok"] == 0
    assert go["metrics"] == {}
    [table] = screen.summary_tables(summary)
    text = tables.text(table)
    assert any("go/default" in line and " n/a " in line for line in text.splitlines())
    doc = {"format": "msgbench-results", "version": 1, "runs": [
        {"id": "r1", "status": "complete", "notes": [], "metadata": {}, "measurements": _measurements(),
         "summary": summary}]}
    assert "go/default" in report.render_html(doc)


def test_a_timed_out_warm_up_is_a_failed_row_and_an_ok_one_alone_is_no_row():
    go = next(s for s in results.summarize_run(_measurements("timeout")) if s["target"] == "go")
    assert go["status"] == "timeout"
    # An interrupted run whose warm-up succeeded measured nothing yet: no row to invent.
    only_ok = [m | {"status": "ok", "error": None} for m in _measurements()[:1]]
    assert results.summarize_run(only_ok) == []
