"""The Findings judge each scenario by what users compare there, name a leader only
where the repetitions differ significantly, keep reference tools out of the race (each
system's own tool a ratio of its own), judge builds each against the first, and say
the same short answers at the end of `run` and `show`."""

import pytest

from msgbench.data import results
from msgbench.views import screen
from msgbench.views.report import findings
from tests.report.report_fixtures import measurement

FANIN = {"senders": 4, "duration_ms": 200, "mix": [{"percent": 100, "kind": "message", "size": 1}]}
STEADY = [100, 100.5, 101, 101.5, 102]


def _doc(measurements: list[dict]) -> dict:
    run = {"id": "r1", "status": "complete", "notes": [], "metadata": {}, "measurements": measurements,
           "summary": results.summarize_run(measurements)}
    return {"format": "msgbench-results", "version": 1, "runs": [run]}


def _fanin(target: str, values: list[float], build: str = "") -> list[dict]:
    out = []
    for rep, value in enumerate(values):
        m = measurement("r1", "fanin-message-1", "fanin", target, "default", FANIN, "senders", rep, False,
                        metrics={"receive_throughput_per_s": value})
        out.append(m | {"build": build})
    return out


def test_a_leader_is_named_only_where_significant():
    [f] = findings.findings(_doc(_fanin("go", [v * 1.5 for v in STEADY]) + _fanin("erlang", STEADY)))
    assert f.leader == "go/default"
    assert f.answer().startswith("go/default ran 1.50 ± 0.02 times faster than erlang/default")
    [f] = findings.findings(_doc(_fanin("go", [v * 1.5 for v in STEADY[:3]]) + _fanin("erlang", STEADY[:3])))
    assert f.leader == "" and f.best == "go/default"
    assert f.answer() == ("go/default vs erlang/default: "
                          "inconclusive: too few repetitions (3 a side can never reach p<0.05)")
    [f] = findings.findings(_doc(_fanin("go", STEADY[::-1]) + _fanin("erlang", STEADY)))
    assert f.leader == "" and f.answer().startswith("go/default vs erlang/default: no significant difference")


def test_builds_are_each_judged_against_the_first_and_none_leads():
    doc = _doc(_fanin("erlang", STEADY, "otp25") + _fanin("erlang", [v * 1.2 for v in STEADY], "otp26")
               + _fanin("erlang", STEADY[::-1], "branch"))
    [f] = findings.findings(doc)
    assert f.leader == ""
    assert [j.text.split(" (")[0] for j in f.judgements] == [
        "erlang@otp26/default ran 1.20 ± 0.01 times faster than erlang@otp25/default",
        "no significant difference"]


def _pubsub(target: str, rate: float, label: str = "default", reference_for=None) -> list[dict]:
    params = {"payload_bytes": 64, "sources": 1, "source_threads": 1, "receivers": 1, "batching_bytes": 8192}
    out = []
    for rep, factor in enumerate([1, 1.004, 1.008, 0.996, 1.002]):
        m = measurement("r1", "pubsub-brokers", "pubsub", target, "default", params, "payload_bytes", rep,
                        False, metrics={"msgs_per_s": rate * factor}, label=label)
        out.append(m | ({"extra": {"reference_for": reference_for}} if reference_for else {}))
    return out


def test_reference_tools_never_run_up_and_each_system_gets_its_own_tool():
    doc = _doc(_pubsub("redis", 1e5) + _pubsub("nats", 2e5)
               + _pubsub("redis_benchmark", 4e5, "reference", ["redis"])
               + _pubsub("nats_bench", 1e5, "reference", ["nats"]))
    [f] = findings.findings(doc)
    assert f.leader == "nats/default" and "than redis/default" in f.answer()
    assert f.own_tool == ["redis/default 0.25x redis_benchmark/default", "nats/default 2.00x nats_bench/default"]


def _chat(target: str, p99: float, think_ms: int = 5000) -> list[dict]:
    params = {"groups": 10, "clients_per_group": 10, "duration_s": 10, "think_ms": think_ms}
    return [measurement("r1", "chat-realistic", "chat", target, "default", params, "groups", rep, False,
                        metrics={"received_per_s": 20.0, "sent_per_s": 20.0, "achieved_send_ratio": 1.0,
                                 "latency_p99_us": p99 * factor})
            for rep, factor in enumerate([1, 1.01, 1.02, 0.99, 0.98])]


def test_realistic_chat_is_judged_by_latency_and_achieved_rate_not_offered_load():
    found = findings.findings(_doc(_chat("erlang", 500) + _chat("go", 1000)))
    assert [f.metric for f in found] == ["latency_p99_us", "achieved_send_ratio"]
    assert found[0].leader == "erlang/default"
    assert found[1].leader == "" and ": no significant difference" in found[1].answer()
    stress = findings.findings(_doc(_chat("erlang", 500, think_ms=0) + _chat("go", 1000, think_ms=0)))
    assert [f.metric for f in stress] == ["received_per_s"]


def test_the_short_answers_end_on_the_same_judgement():
    doc = _doc(_fanin("go", [v * 1.5 for v in STEADY]) + _fanin("erlang", STEADY))
    [line] = screen.answers(doc)
    assert line.startswith("fanin-message-1, ")  # the scenario's name says the workload
    assert "receive_throughput_per_s at senders = 4: go/default ran 1.50 ± 0.02 times faster" in line


@pytest.mark.parametrize("values", [STEADY, [v * 1.5 for v in STEADY]])
def test_the_html_findings_show_a_leader_only_when_significant(values):
    from msgbench.views import report

    page = report.render_html(_doc(_fanin("go", values) + _fanin("erlang", STEADY)))
    row = page[page.index('data-finding="fanin"'):]
    row = row[:row.index("</tr>")]
    significant = values is not STEADY
    assert ('<td class="leader">go/default' in row) == significant
    assert ('<td class="leader">—</td>' in row) != significant


def test_the_findings_open_with_how_many_points_were_noisy_and_why():
    from msgbench.views import report

    doc = _doc(_fanin("go", [50, 160, 100, 30, 140]) + _fanin("erlang", STEADY))
    summary = doc["runs"][0]["summary"]
    # Kinds are read generically: one another engineer adds is counted under its own name.
    summary[1]["warnings"] = ["busy: 2 of 2 cores taken by another process"]
    summary[1]["warning_kinds"] = ["noise:thermal"]  # a kind nobody has named yet
    assert screen.noise_line(summary) == "noisy: 2 of 2 points (1 too noisy (cv > 10%), 1 thermal)"
    page = report.render_html(doc)
    findings_section = page[page.index('id="findings"'):page.index('class="data findings-table"')]
    assert '<p class="noise">noisy: 2 of 2 points (1 too noisy (cv &gt; 10%), 1 thermal)</p>' in findings_section
