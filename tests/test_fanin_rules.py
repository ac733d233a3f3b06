import pytest

from msgbench.cli import main
from msgbench.core.spec import ParamError
from msgbench.data.points import value_text
from msgbench.running.workloads import fanin
from msgbench.workers.worker import Outcome


def test_mix_shorthand():
    assert fanin.parse_value("mix", "message:1") == [{"percent": 100.0, "kind": "message", "size": 1}]
    assert fanin.parse_value("mix", "50%exit_signal:10+50%message:10") == [
        {"percent": 50.0, "kind": "exit_signal", "size": 10},
        {"percent": 50.0, "kind": "message", "size": 10},
    ]
    assert fanin.parse_value("mix", '[{"percent": 100, "kind": "message", "size": 1}]') is None
    assert fanin.parse_value("senders", "4") is None
    with pytest.raises(ParamError, match="PERCENT%KIND:SIZE"):
        fanin.parse_value("mix", "lots%message:x")


def test_shares_must_add_to_100():
    with pytest.raises(ParamError, match="adds to 90%"):
        fanin.check({"mix": [{"percent": 40, "kind": "message", "size": 1},
                             {"percent": 50, "kind": "exit_signal", "size": 1}]})
    with pytest.raises(ParamError, match="twice"):
        fanin.check({"mix": [{"percent": 50, "kind": "message", "size": 1},
                             {"percent": 50, "kind": "message", "size": 1}]})


def test_otp_method_takes_send_and_receive_from_two_runs():
    calls = []

    def run_once(params):
        calls.append(params)
        n = len(calls)
        return Outcome(status="ok", metrics={"send_throughput_per_s": 100.0 * n,
                                             "receive_throughput_per_s": 10.0 * n, "drain_ms": n},
                       verify={"sent_message": n})

    outcome = fanin.measure({"method": "otp"}, run_once)
    assert len(calls) == 2
    assert outcome.metrics == {"send_throughput_per_s": 100.0, "receive_throughput_per_s": 20.0, "drain_ms": 2}
    calls.clear()
    assert fanin.measure({"method": "msgbench"}, run_once).metrics["receive_throughput_per_s"] == 10.0
    assert len(calls) == 1


@pytest.mark.parametrize("args, words", [
    (["-p", "senders=0"], "senders = 0 is out of range: senders must be an integer from 1 to 100,000"),
    (["-p", "mix=60%message:1+30%exit_signal:1"], "adds to 90%"),
    (["-p", "mix=message:0"], "mix = "),
    (["-p", "mix=telegram:1"], "mix = "),
    (["-p", "duration_ms=0"], "duration_ms = 0 is out of range"),
])
def test_bad_fanin_input_refused_before_launch(fake_targets, capsys, args, words):
    assert main(["run", "fanin", "--target", "fake", "--no-build", *args]) == 2
    assert words in capsys.readouterr().err


def test_a_mix_prints_as_the_command_line_takes_it():
    mix = [{"percent": 50.0, "kind": "exit_signal", "size": 10}, {"percent": 50.0, "kind": "message", "size": 10}]
    assert value_text(mix) == "50%exit_signal:10+50%message:10"
    assert fanin.parse_value("mix", value_text(mix)) == mix
