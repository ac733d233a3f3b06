"""What goes in: NaN and infinity refused everywhere, imports checked against the results
schema before anything is stored, and the command line's edge cases refused clearly."""

import json
import os
import subprocess
import sys

import pytest

from msgbench.core import jsonio, spec
from msgbench.core.paths import REPO_ROOT
from msgbench.data import results
from msgbench.data.store import Store
from tests.conftest import FIXTURE_TARGETS
from tests.test_runner import only_run, run_cli

PYTHON = sys.executable


def msgbench(tmp_path, *args) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-m", "msgbench", "--store", str(tmp_path / "s.sqlite"), *args], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=60,
                          env=os.environ | {"MSGBENCH_TARGETS_DIR": str(FIXTURE_TARGETS)})


def refused(proc, *words):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr


# ---------------------------------------------------------------- NaN and infinity


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e999", "NaN"])
def test_non_finite_parameters_are_refused_naming_the_field(tmp_path, text):
    refused(msgbench(tmp_path, "run", "ring", "--target", "fake", "--no-build", "-p", f"n={text}"), "n = ")
    refused(msgbench(tmp_path, "run", "fanin", "--target", "fake", "--no-build", "-p", f"mix={text}%message:1"),
            "mix[0].percent", "> 0 and <= 100")


def test_a_non_finite_value_inside_a_json_parameter_is_named():
    wl = spec.workload("fanin")
    with pytest.raises(spec.ParamError, match=r"mix\[1\]\.percent is not a finite number"):
        spec.resolve_params(wl, {"mix": [{"percent": 50, "kind": "message", "size": 1},
                                         {"percent": float("nan"), "kind": "message", "size": 2}]})


def test_a_worker_result_with_nan_is_an_error_not_ok(fake_targets):
    assert run_cli("run", "ring", "--target", "fake", "--variant", "nan", "--repeat", "1", "--warmup", "0",
                   "--no-build") == 1
    _, measurements, _ = only_run(fake_targets)
    assert measurements[0]["status"] == "error"
    assert "not a number JSON allows" in measurements[0]["error"]


def test_strict_json_both_ways():
    for text in ('{"a": NaN}', '{"a": Infinity}', '{"a": -Infinity}', '{"a": 1e999}'):
        with pytest.raises(jsonio.JSONError):
            jsonio.loads(text)
    with pytest.raises(ValueError):
        jsonio.dumps({"a": float("nan")})
    with pytest.raises(jsonio.JSONError, match="nested too deeply"):
        jsonio.loads("[" * 100_000 + "]" * 100_000)


# ---------------------------------------------------------------- imports


def document(**measurement_changes) -> dict:
    m = {"scenario": "ring", "workload": "ring", "target": "fake", "variant": "ok", "params": {"n": 10},
         "repetition": 1, "status": "ok", "metrics": {"hops_per_s": 5.0}, "verify": {"hops": 10}}
    return {"format": "msgbench-results", "version": 1,
            "runs": [{"id": "20261122-090000-aaaa", "created_at": "2026-11-22T09:00:00+00:00", "status": "complete",
                      "measurements": [m, m | measurement_changes]}]}


@pytest.mark.parametrize(("change", "message"), [
    ({"metrics": {"hops_per_s": "fast"}}, 'runs[0].measurements[1].metrics.hops_per_s: expected a number, got "fast"'),
    ({"metrics": None}, "runs[0].measurements[1].metrics: expected an object, got null"),
    ({"params": [1, 2]}, "runs[0].measurements[1].params: expected an object, got a list"),
    ({"repetition": "1"}, 'runs[0].measurements[1].repetition: expected an integer, got "1"'),
    ({"target": None}, "runs[0].measurements[1].target: expected a string, got null"),
    ({"verify": {"hops": [1]}}, "runs[0].measurements[1].verify.hops: expected an integer or a number or a string"),
])
def test_an_import_of_the_wrong_shape_names_the_field_and_stores_nothing(tmp_path, change, message):
    (tmp_path / "doc.json").write_text(json.dumps(document(**change)))
    proc = msgbench(tmp_path, "import", str(tmp_path / "doc.json"))
    refused(proc, message)
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.sqlite").exists() or Store(tmp_path / "s.sqlite").runs() == []


def test_a_good_import_is_read_back_by_every_reader(tmp_path):
    (tmp_path / "doc.json").write_text(json.dumps(document()))
    assert msgbench(tmp_path, "import", str(tmp_path / "doc.json")).returncode == 0
    for command in (["show", "latest"], ["export", "latest"], ["export", "latest", "--format", "csv"],
                    ["compare", "latest", "latest"], ["report", "latest", "-o", str(tmp_path / "r.html")]):
        proc = msgbench(tmp_path, *command)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (command, proc.stderr)


@pytest.mark.parametrize(("content", "words"), [
    (b'{"format": "msgbench-results", "version": 1, "runs": [{"x": NaN}]}', "NaN is not a number JSON allows"),
    (b'{"format": "msgbench-results", "version": 1, "runs": [1e999]}', "too large a number"),
    (b"\xff\xfe{\x00}", "not UTF-8 text (byte 0xff at offset 0)"),
    (b"\x7fELF\x02\x01\x01\x00\x00\x00", "a binary file"),
    (b"[" * 200_000 + b"]" * 200_000, "nested too deeply"),
# Named ids: pytest 9.1 would make the nested file's 400,000 bytes its test id, and every
# child's PYTEST_CURRENT_TEST then exceeds the kernel's limit on one variable (E2BIG).
], ids=["NaN", "1e999", "not UTF-8", "binary", "nested 200,000 deep"])
def test_non_json_binary_and_deeply_nested_files_get_one_line(tmp_path, content, words):
    (tmp_path / "doc.json").write_bytes(content)
    proc = msgbench(tmp_path, "import", str(tmp_path / "doc.json"))
    refused(proc, words)
    assert len(proc.stderr.strip().splitlines()) == 1


def test_the_schema_accepts_what_export_writes(fake_targets, tmp_path, capsys):
    run_cli("run", "ring", "--target", "fake", "-p", "n=10", "--repeat", "2", "--no-build")
    capsys.readouterr()
    assert run_cli("export", "latest", "-o", str(tmp_path / "run.json")) == 0
    doc = json.loads((tmp_path / "run.json").read_text())
    assert results.check_document(doc, "export")


# ---------------------------------------------------------------- the command line


@pytest.mark.parametrize("value", ["nan", "0", "-1", "inf", "soon"])
def test_a_timeout_must_be_a_positive_finite_number_of_seconds(tmp_path, value):
    refused(msgbench(tmp_path, "run", "ring", "--target", "fake", "--no-build", f"--timeout={value}"),
            f"'{value}' is not a time limit: give a positive number of seconds")


def test_a_second_sweep_is_refused(tmp_path):
    refused(msgbench(tmp_path, "run", "ring", "--target", "fake", "--no-build", "--sweep", "n=10,20", "--sweep",
                     "m=1,2"), "--sweep is given 2 times", "a run sweeps one parameter")


@pytest.mark.parametrize("option", ["--target", "--variant"])
def test_a_name_given_twice_is_refused(tmp_path, option):
    value = "fake,fake" if option == "--target" else "ok,slow,ok"
    proc = msgbench(tmp_path, "run", "ring", "--target", "fake", "--no-build", option, value)
    refused(proc, f"names {value.split(',')[0]} more than once")


@pytest.mark.parametrize(("mix", "words"), [
    ("150%message:1", "mix[0].percent = 150.0 is out of range: percent must be a number > 0 and <= 100"),
    ("0%message:1+100%message:2", "mix[0].percent = 0.0 is out of range: percent must be a number > 0 and <= 100"),
    ("60%message:1", "adds to 60%: the shares must add to 100%"),
])
def test_fanin_percents_name_the_accepted_range(tmp_path, mix, words):
    refused(msgbench(tmp_path, "run", "fanin", "--target", "fake", "--no-build", "-p", f"mix={mix}"), words)


def test_integer_parameters_reach_workers_as_integers():
    params = spec.resolve_params(spec.workload("fanin"), {"senders": 2.0, "mix": [
        {"percent": 100, "kind": "message", "size": 3.0}]})
    assert type(params["senders"]) is int and type(params["mix"][0]["size"]) is int
