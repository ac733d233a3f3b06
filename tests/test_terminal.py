"""What the terminal shows of a run: headline tables, the grouped warnings, progress,
and the command line's small promises (--version, show --format md/seed, n/a rows)."""

import io

import pytest

from msgbench.cli import main
from msgbench.core import units
from msgbench.data import results
from msgbench.data.points import UNKNOWN_MACHINE, machine_text
from msgbench.data.store import Store
from msgbench.running import progress, runner, suites
from msgbench.views import screen, tables
from msgbench.workers import targets


def summary(workload, target, params, metrics, *, status="ok", warnings=(), kinds=None, sweep=None,
            scenario=None):
    return {"scenario": scenario or workload, "workload": workload, "target": target, "build": "",
            "variant": "default", "variant_label": "idiomatic", "params": params, "sweep": sweep,
            "x": params.get(sweep) if sweep else None, "status": status, "ok": 3 if status == "ok" else 0,
            "total": 3, "warnings": list(warnings),
            "warning_kinds": list(kinds) if kinds is not None else ["noise:cv"] * len(warnings),
            "metrics": {name: {"median": v, "min": v * 0.9, "max": v * 1.1, "cv": 0.05, "n": 3}
                        for name, v in metrics.items()},
            **({"error": "verification failed: received != sent"} if status == "failed" else {})}


def test_socket_echo_leads_with_round_trip_in_microseconds_and_flow_with_megabytes():
    points = [summary("socket", "c", {"mode": "echo", "size": 64}, {"round_trip_us": 41.2,
                                                                    "bandwidth_bytes_per_s": 3.1e6},
                      sweep="size", scenario="socket echo"),
              summary("socket", "c", {"mode": "flow", "size": 64}, {"bandwidth_bytes_per_s": 312e6},
                      sweep="size", scenario="socket flow")]
    echo, flow = screen.summary_tables(points)
    assert echo.title.startswith("socket echo: round trip") and "lower is better" in echo.title
    assert echo.rows[0][echo.headers.index("round trip")] == "41.2 µs"
    assert "bandwidth" not in echo.headers
    assert flow.rows[0][flow.headers.index("bandwidth MB/s")] == "312"


def test_open_loop_pubsub_shows_the_achieved_share_of_its_rate_and_its_latency():
    point = summary("pubsub", "nats", {"payload_bytes": 1024, "rate": 100000},
                    {"msgs_per_s": 40000.0, "latency_p50_us": 880000.0, "latency_p99_us": 1.2e6, "loss_ratio": 0.0})
    [table] = screen.summary_tables([point])
    row = dict(zip(table.headers, table.rows[0], strict=True))
    assert row["achieved msg/s"] == "40k (40%)"
    assert (row["p50"], row["p99"]) == ("880 ms", "1.2 s")


def pubsub_measurement(rate, msgs_per_s, repetition):
    return {"scenario": "pubsub", "workload": "pubsub", "target": "nats", "variant": "default",
            "variant_label": "idiomatic", "params": {"payload_bytes": 16, "rate": rate}, "sweep": None,
            "x": None, "repetition": repetition, "warmup": False, "status": "ok", "error": None,
            "metrics": {"msgs_per_s": msgs_per_s, "loss_ratio": 0.0}, "verify": {}, "extra": {}}


def test_an_open_loop_that_missed_its_rate_is_warned_of_and_one_that_kept_it_is_not():
    [missed] = results.summarize_run([pubsub_measurement(100000, 40000.0, r) for r in (1, 2, 3)])
    assert "rate" in missed["warning_kinds"]
    text = missed["warnings"][missed["warning_kinds"].index("rate")]
    assert text.startswith("msgs_per_s: median 40k, under rate * 0.9 = 90k (the open loop fell")
    [kept] = results.summarize_run([pubsub_measurement(100000, 99000.0, r) for r in (1, 2, 3)])
    assert "rate" not in kept["warning_kinds"]
    [closed] = results.summarize_run([pubsub_measurement(0, 5.0, r) for r in (1, 2, 3)])
    assert "rate" not in closed["warning_kinds"]
    assert len(missed["warnings"]) == len(missed["warning_kinds"])


def test_warnings_are_summarised_in_at_most_ten_lines_most_serious_first():
    noisy = [summary("ring", f"t{i}", {"n": 10 * i, "m": 1}, {"hops_per_s": 1e6}, sweep="n",
                     warnings=["hops_per_s: coefficient of variation 40% (> 10%): too noisy to trust"])
             for i in range(1, 64)]
    lossy = [summary("pubsub", "zeromq", {"payload_bytes": size}, {"msgs_per_s": 1e5, "loss_ratio": loss},
                     sweep="payload_bytes", warnings=[f"loss_ratio: up to {loss} (messages were lost)"],
                     kinds=["loss"]) for size, loss in ((16, 0.85), (1024, 0.96))]
    failed = [summary("socket", "rust", {"mode": "flow", "size": 64}, {}, status="failed", sweep="size")]
    run = {"id": "r1", "summary": noisy + lossy + failed}
    lines = screen.warning_summary(run)
    assert len(lines) <= screen.MAX_WARNING_LINES
    assert lines[0] == "warnings (66; every one: msgbench show r1 --warnings):"
    assert lines[1].startswith("  failed: rust/default socket at size=64: failed: verification failed")
    assert lines[2] == ("  loss: zeromq/default pubsub at payload_bytes=16, 1024: loss_ratio: up to 0.96 "
                        "(messages were lost) (the worst, at payload_bytes=1024)")
    assert lines[-1].startswith("  noisy: 63 of 66 points (63 too noisy (cv > 10%))")
    every = screen.all_warnings(run)
    assert len(every) == 66
    assert every[0].startswith("failed:") and every[-1].startswith("noisy:")


def test_more_serious_groups_than_room_are_counted_not_dropped():
    lossy = [summary("pubsub", f"sys{i}", {"payload_bytes": 16}, {"loss_ratio": 0.5},
                     warnings=["loss_ratio: up to 0.5"], kinds=["loss"]) for i in range(12)]
    lines = screen.warning_summary({"id": "r", "summary": lossy})
    assert len(lines) == screen.MAX_WARNING_LINES
    assert lines[-1] == "  ... and 4 more lost, failed or missed-rate groups (show --warnings)"


def test_the_legend_explains_the_marks_present():
    points = [summary("ring", "go", {"n": 10}, {"hops_per_s": 1.0}, warnings=["noisy"]),
              summary("ring", "java", {"n": 10}, {}, status="unsupported")]
    assert screen.legend(points) == ("ok* = ok, with a warning (below); n/a = the target does not implement "
                                     "this point or cannot hold it (the notes say why)")
    assert screen.legend(points[:1]) == "ok* = ok, with a warning (below)"


def test_plain_text_has_no_escape_codes_and_no_trailing_blanks():
    table = tables.Table(["a", "long header"], [["\x1b[31mred", "x"]], title="t", styles=["bad"])
    text = tables.text(table)
    assert "\x1b" not in text
    assert "\\x1b[31mred" in text
    assert all(line == line.rstrip() for line in text.splitlines())
    assert text.splitlines()[0] == "t"


def test_a_wide_table_wraps_on_a_narrow_terminal_and_not_in_a_pipe():
    rows = [["scenario name " * 4, "erlang/default", "ok", "12.3 µs"]]
    table = tables.Table(["scenario", "target/variant", "status", "round trip"], rows)
    assert len(tables.text(table).splitlines()) == 3  # header, rule, row: one line each
    from rich.console import Console
    narrow = io.StringIO()
    Console(file=narrow, width=50, color_system=None).print(tables.rich_table(table))
    assert max(len(line) for line in narrow.getvalue().splitlines()) <= 50


@pytest.mark.parametrize(("value", "text"), [(0.85, "850 ns"), (41.2, "41.2 µs"), (880000, "880 ms"),
                                             (3.2e6, "3.2 s")])
def test_durations_read_in_the_unit_that_keeps_them_short(value, text):
    assert units.duration_us(value) == text


def test_an_unknown_machine_is_said_in_words():
    assert machine_text({}) == UNKNOWN_MACHINE
    assert machine_text({"cpu_model": None, "cores": None}) == UNKNOWN_MACHINE
    assert machine_text({"cpu_model": "AMD EPYC", "cores": 2, "kernel": "Linux 6.1"}) == "AMD EPYC, 2 cores, Linux 6.1"


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_progress_lines_in_a_log_say_elapsed_and_left_once_the_run_is_long(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    out = io.StringIO()
    bar = progress.Progress(total=4, stream=out)
    for _ in range(2):
        bar.start("ring n=10 go/default")
        clock.now += 3.0
        bar.done("ok")
    first, second = out.getvalue().splitlines()
    assert first == "[1/4] ring n=10 go/default: ok (3.0 s)"  # 3 s in: too early to estimate
    assert second == "[2/4] ring n=10 go/default: ok (3.0 s); 6 s elapsed, about 6 s left"


@pytest.mark.parametrize("seconds, said", [(45, "45 s"), (290, "4 min 50 s"), (240, "4 min"),
                                           (3720, "1 h 02 min"), (59.6, "1 min")])
def test_times_are_said_in_words_never_as_a_clock(seconds, said):
    assert progress.duration(seconds) == said


def test_the_bar_estimates_from_the_measurements_durations_not_the_recent_pace(monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(progress.time, "monotonic", clock)
    bar = progress.Progress(total=60, stream=io.StringIO())
    bar.start("chat go/default")
    clock.now += 10.0
    bar.done("ok")
    for _ in range(9):  # quick n/a rows: rich's recent pace would say a few seconds left
        bar.start("chat go/default")
        bar.done("unsupported")
    assert bar.left_s() == pytest.approx(10.0 / 10 * 50)
    assert bar.times_text() == "; 10 s elapsed, about 50 s left"


def test_cli_version_and_help_on_every_option(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out.startswith("msgbench ")
    from msgbench.cli import _parser
    parser = _parser()
    subparsers = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in [("msgbench", parser), *subparsers.choices.items()]:
        for action in sub._actions:
            if action.dest != "help" and action.__class__.__name__ != "_SubParsersAction":
                assert action.help, f"{name} {action.option_strings or action.dest} has no help text"


def test_a_run_prints_headline_tables_a_legend_and_short_warnings(fake_targets, capsys):
    assert main(["run", "ring", "--target", "fake", "-p", "m=3", "--sweep", "n=10,20", "--repeat", "2",
                 "--warmup", "0", "--no-build"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out
    placed, rest = out.split("\n", 1)  # where the processes ran comes first: the figures depend on it
    assert placed.startswith("cpus: ")
    assert rest.startswith("ring: token passing (hops per second, higher is better) and ring creation\n")
    assert "warning:" not in out  # no line per warning: the summary groups them
    assert "every one: msgbench show " in out
    store = Store(fake_targets)
    run_id = store.resolve("latest")
    assert main(["show", run_id, "--warnings"]) == 0
    listed = capsys.readouterr().out.splitlines()
    run = results.run_document(store, [run_id])["runs"][0]
    assert len(listed) == sum(len(s["warnings"]) for s in run["summary"])


def test_show_md_is_markdown_and_seed_says_when_there_is_no_seed_format(fake_targets, capsys):
    main(["run", "socket", "--target", "fake", "-p", "mode=echo", "-p", "size=64", "-p", "total_bytes=1024",
          "--repeat", "1", "--warmup", "0", "--no-build"])
    capsys.readouterr()
    assert main(["show", "latest", "--format", "md"]) == 0
    assert capsys.readouterr().out.startswith("# msgbench run ")
    assert main(["show", "latest", "--format", "seed"]) == 0
    captured = capsys.readouterr()
    assert "socket: no seed text format; the table instead" in captured.err
    assert "socket echo: round trip per message" in captured.out


def test_points_a_suite_cannot_hold_are_na_rows_not_gone(fake_targets, monkeypatch, tmp_path, capsys):
    suite = tmp_path / "s.toml"
    suite.write_text('description = "x"\nrepeat = 1\nwarmup = 0\n[[scenario]]\nname = "ring"\nworkload = "ring"\n'
                     'params = { m = 1 }\nsweep = { n = [10, 100000] }\n')
    fake = targets.target("fake")
    ok = fake.variants["ok"]
    monkeypatch.setitem(fake.variants, "ok", runner.targets.Variant(**{**ok.__dict__, "max_processes": 1000}))
    plan = runner.plan_run(suites.load_suite(str(suite)).scenarios, ["fake"], "ok", 1, 0, None,
                           strict_targets=False)
    store = Store(fake_targets)
    run_id, status = runner.execute(plan, store, str(suite), progress=progress.Progress(1, quiet=True))
    assert status == "complete"
    run = results.run_document(store, [run_id])["runs"][0]
    assert {s["x"]: s["status"] for s in run["summary"]} == {10: "ok", 100000: "unsupported"}
    [table] = screen.summary_tables(run["summary"])
    assert table.headers[:3] == ["n", "target/variant", "status"]
    assert [row[:3] for row in table.rows] == [["10", "fake/ok", "ok*"], ["100000", "fake/ok", "n/a"]]  # ok*: 1 rep


def test_an_na_point_is_no_failure_in_the_warnings():
    na = summary("ring", "java", {"n": 100000}, {}, status="unsupported",
                 warnings=["1 of 1 repetitions did not succeed (unsupported: needs 100,000 processes)"],
                 kinds=["failed"])
    assert screen.warning_summary({"id": "r", "summary": [na]}) == []
    assert screen.all_warnings({"id": "r", "summary": [na]}) == []
