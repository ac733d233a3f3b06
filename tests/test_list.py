"""`msgbench list`: one line per workload, target and suite; a word keeps only what it
names, in full; a word that names nothing is a one-line error."""

from msgbench.cli import main
from msgbench.core import spec
from msgbench.running import suites
from msgbench.workers import targets


def test_list_is_one_line_each_and_names_every_default(fake_targets, capsys):
    assert main(["list"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    expected = len(spec.workloads()) + len(targets.registry()) + len(suites.suite_names())
    assert len([line for line in lines if line.startswith("  ")]) == expected
    fake = next(line for line in lines if line.startswith("  fake "))
    assert f"{targets.target('fake').default_variant}*" in fake
    assert "params:" not in out  # the details are for list WORD or --long


def test_a_word_keeps_what_it_names_in_full(fake_targets, capsys):
    assert main(["list", "fakebroker"]) == 0
    out = capsys.readouterr().out
    assert "Workloads:" not in out and "Suites:" not in out
    assert "  fakebroker " in out and "  fake " not in out
    assert main(["list", "ring"]) == 0
    out = capsys.readouterr().out
    assert "params: n=" in out and "  fake " in out  # the targets that implement ring too


def test_a_word_that_names_nothing_is_one_line(fake_targets, capsys):
    assert main(["list", "fakebrokr"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("list 'fakebrokr' names no workload, target, variant or suite; did you mean fakebroker?")
