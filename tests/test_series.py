"""A worker's time series leaves the harness's memory as it arrives, and is stored as it came."""

import json
import os
import signal
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

from msgbench.core import jsonio
from msgbench.data.store import Store
from msgbench.workers import worker
from msgbench.workers.series import SampleSeries


def sample(k: int) -> dict:
    # the shape of a chat server's sample: counts, bytes and rates, ints and floats
    return {f"server_{kind}_bytes": 1_000_000 + 4096 * k + i for i, kind in enumerate(
        ["rss", "heap", "stack", "code", "atom", "binary", "ets", "processes", "system", "other"])} | {
        f"load_{kind}_per_s": 400.0 + k / 7 + i for i, kind in enumerate(["sent", "received", "joined"])} | {
        "gc_count": k * 3, "gc_pause_ns": 12_345.5 * k, "cpu_percent": 37.25, "processes_count": 2013,
        "huge_bytes": 2**60 + k if k == 7 else 0}


def line(message: dict) -> bytes:
    return jsonio.dumps(message).encode()


def protocol_after_hello() -> worker.Protocol:
    protocol = worker.Protocol("fake", "ok", None)
    protocol.feed(line({"type": "hello", "target": "fake", "runtime_version": "1", "variant": "ok"}))
    assert protocol.hello and not protocol.breach
    return protocol


def feed_samples(protocol: worker.Protocol, first: int, count: int) -> None:
    for k in range(first, first + count):
        protocol.feed(line({"type": "sample", "t_ms": k * 1000, "values": sample(k % 50)}))
    assert not protocol.breach, protocol.breach


def test_samples_come_back_as_they_came():
    series = SampleSeries()
    expected = []
    for k in range(20):
        values = sample(k) if k != 3 else {"other_count": 1}  # a sample with other names
        series.append(k * 1000 + 0.5 * (k % 2), values)
        expected.append({"t_ms": k * 1000 + 0.5 * (k % 2), **values})
    assert len(series) == 20 and series.last_t_ms == 19_000.5
    got = series.to_list()
    assert json.dumps(got) == json.dumps(expected)  # ints stay ints: 1000, not 1000.0
    assert got[7]["huge_bytes"] == 2**60 + 7  # beyond a double's integers: kept exactly
    assert series.lines.json_array() == json.dumps(expected)  # the text the store writes


def test_the_protocols_memory_does_not_grow_with_the_samples_fed_through_it():
    # The 30-minute chat soak's harness grew 23.7 KiB a minute: every sample was kept in
    # memory until the measurement was stored. 5,000 more samples must hold no memory
    # (before, even these two-value ones took about 180 bytes each: 900 KB, against the
    # 32 KiB allowed). Small samples, and no more of them than that, keep the test short:
    # each line is checked against the message schema, 0.6 ms under tracemalloc.
    protocol = protocol_after_hello()

    def feed(first: int, count: int) -> None:
        for k in range(first, first + count):
            protocol.feed(line({"type": "sample", "t_ms": k * 1000, "values": {"rss_bytes": 10**6 + k,
                                                                                "gc_count": k / 3}}))
        assert not protocol.breach, protocol.breach

    tracemalloc.start()
    try:
        feed(0, 1_000)  # the file open, buffers and caches warmed
        before = tracemalloc.get_traced_memory()[0]
        feed(1_000, 5_000)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(protocol.series) == 6_000 and protocol.series.last_t_ms == 5_999_000
    assert grown < 32 * 1024, f"{grown} bytes held after 5,000 more samples"


def test_the_stored_series_is_what_the_worker_sent(tmp_path):
    protocol = protocol_after_hello()
    sent = [{"type": "sample", "t_ms": k * 1000 + 0.25, "values": sample(k)} for k in range(300)]
    sent[5]["values"] = {"other_count": 1}
    for message in sent:
        protocol.feed(line(message))
    protocol.feed(line({"type": "result", "verify": {}, "measured": {}}))
    outcome = worker.Outcome(status="error", exit_code=0)
    worker.judge(outcome, protocol, False, 60)
    assert outcome.status == "ok", outcome.error
    store = Store(tmp_path / "s.sqlite")
    run_id = store.start_run("test", None, {}, [])
    store.add_measurement(run_id, {
        "scenario": "s", "workload": "chat", "target": "fake", "variant": "ok", "variant_label": "ok",
        "params": {}, "repetition": 1, "warmup": False, "status": "ok", "series": outcome.series})
    store.add_measurement(run_id, {  # a series made as a list (an import, a test) is stored as before
        "scenario": "s", "workload": "chat", "target": "fake", "variant": "ok", "variant_label": "ok",
        "params": {}, "repetition": 2, "warmup": False, "status": "ok", "series": [{"t_ms": 1, "a_count": 2}]})
    expected = [{"t_ms": m["t_ms"], **m["values"]} for m in sent]
    stored = [m["series"] for m in store.measurements(run_id)]
    assert stored == [expected, [{"t_ms": 1, "a_count": 2}]]
    assert stored[0][7]["huge_bytes"] == 2**60 + 7 and isinstance(stored[0][0]["server_rss_bytes"], int)
    text = store.db.execute("SELECT series FROM measurements WHERE repetition = 1").fetchone()[0]
    assert text == json.dumps(expected)  # the very text a list of them was stored as


def test_a_sample_earlier_than_the_previous_one_is_a_breach():
    protocol = protocol_after_hello()
    feed_samples(protocol, 5, 2)
    protocol.feed(line({"type": "sample", "t_ms": 4000, "values": sample(0)}))
    assert protocol.breach == "the worker's sample at t_ms=4000 is earlier than its previous one"
    assert len(protocol.series) == 2


def test_more_samples_than_the_limit_is_a_breach(monkeypatch):
    monkeypatch.setattr(worker, "MAX_SAMPLES", 100)
    protocol = protocol_after_hello()
    feed_samples(protocol, 0, 100)
    protocol.feed(line({"type": "sample", "t_ms": 10**6, "values": sample(0)}))
    assert protocol.breach == "the worker sent more than 100 samples (at most one a second is expected)"
    assert len(protocol.series) == 100


def test_a_sample_that_cannot_be_written_is_a_breach_in_one_line(monkeypatch):
    protocol = protocol_after_hello()
    feed_samples(protocol, 0, 2)

    def full(self, value):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("msgbench.core.spill.JsonLines.append", full)
    protocol.feed(line({"type": "sample", "t_ms": 5000, "values": sample(0)}))
    assert protocol.breach.startswith("cannot keep the worker's samples in ")
    assert protocol.breach.endswith("[Errno 28] No space left on device") and len(protocol.series) == 2


def test_a_worker_without_samples_opens_no_file_and_stores_an_empty_series():
    series = SampleSeries()
    assert series.lines._file is None and series.lines.json_array() == "[]" and series.to_list() == []


SPILLER = textwrap.dedent("""
    import sys
    from msgbench.workers.series import SampleSeries
    series = SampleSeries()
    for k in range(2000):
        series.append(k * 1000, {"rss_bytes": k})
    print(len(series), flush=True)
    sys.stdin.read()  # held open until killed
""")


@pytest.mark.parametrize("end", [signal.SIGKILL, signal.SIGINT])
def test_the_spilled_samples_leave_nothing_behind_however_the_harness_ends(tmp_path, end):
    # The file has no name: nothing in the temporary directory while the samples are
    # spilled, nor after a SIGKILL (no clean-up runs) or a Ctrl-C.
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = os.environ | {"TMPDIR": str(tmp), "PYTHONPATH": os.getcwd()}
    child = subprocess.Popen([sys.executable, "-c", SPILLER], env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert child.stdout.readline().strip() == "2000"
        open_files = [os.readlink(f"/proc/{child.pid}/fd/{fd}") for fd in os.listdir(f"/proc/{child.pid}/fd")]
        spilled = [f for f in open_files if f.startswith(str(tmp))]
        assert len(spilled) == 1 and spilled[0].endswith("(deleted)"), open_files
        assert list(tmp.iterdir()) == []
    finally:
        child.send_signal(end)
        child.wait(timeout=30)
        child.stdin.close()
        child.stdout.close()
    assert list(tmp.iterdir()) == []
