"""The msgbench command line."""

import argparse
import difflib
import functools
import io
import json
import math
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

import msgbench.running.limits as machine_limits
from msgbench import __version__, capacity_cli, cliargs
from msgbench.cliargs import (  # shared with capacity_cli: the arguments every command reads alike
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    UsageError,
    param_value,
)
from msgbench.cliargs import names as _names
from msgbench.cliargs import open_store as _store
from msgbench.cliargs import parse_assignment as _parse_assignment
from msgbench.cliargs import percent as _percent
from msgbench.core import paths, phases, spec, terminal
from msgbench.core.paths import default_store_path
from msgbench.data import compare, results, storefile, trend
from msgbench.data.points import machine_name, machine_text
from msgbench.data.store import Store, StoreError
from msgbench.hosts import inventory as hosts
from msgbench.running import building, builds, calibrate, eta, probe, suites, tuning
from msgbench.running import workloads as workload_runs
from msgbench.running.beside import BuildsBeside
from msgbench.running.progress import duration
from msgbench.running.runner import (
    DEFAULT_BUDGET_PRECISION,
    DEFAULT_TIMEOUT_S,
    PlanError,
    drop_target,
    execute,
    plan_run,
)
from msgbench.views import capacity_view, doctor, screen, tables, workloads
from msgbench.views.formats import markdown, otp, registry
from msgbench.workers import cpus, targets

EXIT_BROKEN_PIPE = 128 + 13  # as a process killed by SIGPIPE, what a shell expects of `... | head`


# What run and show print: a view for the terminal, or any file format export writes.
VIEWS = ["table", "seed", *registry.names()]


def main(argv: list[str] | None = None) -> int:
    saved = terminal.install()  # no control sequence from stored data reaches the terminal
    try:
        code = _main(argv)
        sys.stdout.flush()  # here, where a closed pipe can still be caught
        return code
    except BrokenPipeError:
        # The reader went away (`msgbench list | head -1`): end quietly, as a pipe's writer
        # does, and keep the interpreter from complaining about the unflushed rest.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
        return EXIT_BROKEN_PIPE
    finally:
        terminal.restore(saved)


def _main(argv: list[str] | None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return EXIT_USAGE
    try:
        return args.handler(args)
    except (UsageError, PlanError, spec.ParamError, targets.TargetError, StoreError,
            suites.SuiteError, results.DocumentError, builds.BuildError) as exc:
        print(f"msgbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except sqlite3.Error as exc:  # a store that failed under us (damaged, locked while reading)
        print(f"msgbench: error: the store {args.store or default_store_path()}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except KeyboardInterrupt:
        print("msgbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


class _OneLineParser(argparse.ArgumentParser):
    """argparse, but a bad option is one line naming it and where the options are listed,
    not the command's whole usage (12 lines for `run`) with the reason at the end."""

    def error(self, message: str):
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; `{self.prog} --help` lists the options\n")


def _parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(prog="msgbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"msgbench {__version__}",
                        help="print msgbench's version and exit")
    parser.add_argument("--store", type=Path, default=None,
                        help=f"SQLite result store (default {default_store_path()}, or $MSGBENCH_STORE)")
    sub = parser.add_subparsers(metavar="COMMAND")

    def command(name, handler, help_text, description=None):
        p = sub.add_parser(name, help=help_text, description=description or help_text)
        p.set_defaults(handler=handler)
        return p

    _machine_commands(command)
    _run_arguments(command("run", cmd_run, "run a workload or a suite and store the results"))
    _store_commands(command)
    _comparison_commands(command)
    _view_commands(command)
    capacity_cli.register(command)
    return parser


def _machine_commands(command) -> None:
    """The machine and its targets: doctor, tune, list, build."""
    command("doctor", cmd_doctor, "what is installed, and how to install the rest; what adds noise here")
    p = command("tune", cmd_tune, "as root: make figures steadier (CPU governor performance, turbo off, idle "
                                  "polling on, where exposed), saving what was there; --revert restores it")
    p.add_argument("--revert", action="store_true", help="restore exactly what msgbench tune changed")
    p = command("list", cmd_list, "workloads, targets with their variants, and suites: one line each; "
                "with a word, only what it names, in full")
    p.add_argument("filter", nargs="?", metavar="WORD",
                   help="only the workloads, targets, variants and suites whose name, workloads, kind or "
                        "language contain WORD (e.g. java, pubsub, reference), with their details")
    p.add_argument("--long", action="store_true", help="every detail: parameters, each variant's description")
    p = command("build", cmd_build, "build the targets (all installed ones by default)")
    p.add_argument("--target", help="comma-separated targets")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, metavar="N",
                   help="builds at a time (default: the CPU count, here %(default)s)")


def _run_arguments(p) -> None:
    """run's arguments, in its phases: what is measured, how long and how precisely,
    where the processes run, and what is printed and built."""
    _run_what(p)
    _run_how_long(p)
    _run_where(p)
    _run_output_and_builds(p)


def _run_what(p) -> None:
    """What a run measures: the workload or suite, targets, variants, parameters."""
    p.add_argument("workload", nargs="?", help="the workload to run (or use --suite)")
    p.add_argument("--suite", help="run a suite: " + ", ".join(suites.suite_names()))
    p.add_argument("--target", help="comma-separated targets (default: every installed one)")
    p.add_argument("--variant", help="default, all, or comma-separated variant names")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a fixed parameter (repeatable)")
    p.add_argument("--sweep", metavar="NAME=V1,V2,...", action="append",
                   help="sweep one parameter (the x axis); once per run")
    p.add_argument("--method", choices=["msgbench", "otp"], help="fanin: how throughput is computed")


def _run_how_long(p) -> None:
    """How long and how precisely: repetitions, precision, time limits, budget."""
    p.add_argument("--repeat", type=int, help="measured repetitions per point (default 5; suites set their own)")
    p.add_argument("--warmup", type=int, help="discarded warm-up repetitions per point (default 1)")
    p.add_argument("--precision", type=_percent, metavar="PERCENT",
                   help="add repetitions (interleaved) until each point's primary metric is known within "
                        "this, e.g. 2%% (95%% confidence interval of the mean); points that do not get there "
                        "are said")
    p.add_argument("--max-repeat", type=int, default=30, metavar="N",
                   help="with --precision: at most N repetitions per point (default 30)")
    p.add_argument("--timeout", type=_positive_seconds,
                   help=f"time limit per worker in s (default {DEFAULT_TIMEOUT_S:g})")
    p.add_argument("--min-time", metavar="TIME",
                   help="calibrate each point's work from its warm-up so that its timed section lasts at least "
                        f"this (default {calibrate.DEFAULT_MIN_TIME_S:g}s, or $MSGBENCH_MIN_TIME; 0: run the work "
                        "as given)")
    p.add_argument("--budget", metavar="TIME",
                   help="the run's whole time, e.g. 4m: after the planned repetitions, more are added (interleaved, "
                        "the widest confidence intervals first) until each point is known within --precision "
                        f"(default {DEFAULT_BUDGET_PRECISION * 100:g}%% with a budget) or the budget is spent")


def _run_where(p) -> None:
    """Where the processes run: CPUs, another host, a namespace, placed roles."""
    p.add_argument("--cpus", default=cpus.DEFAULT_RUN_POLICY, metavar="POLICY",
                   help="where the processes run: " + "; ".join(f"{k}: {v}" for k, v in cpus.POLICIES.items())
                        + f" (default {cpus.DEFAULT_RUN_POLICY}; docs/methodology.md)")
    p.add_argument("--remote", metavar="USER@HOST",
                   help="placement=remote: run the server half on this host over ssh (default: a network "
                        "namespace on this machine, which needs root)")
    p.add_argument("--remote-dir", help="with --remote: the target folder's path there (default: the same path)")
    p.add_argument("--netem", metavar="OPTIONS",
                   help="placement=remote in a namespace: shape its link with tc netem, e.g. 'delay 1ms rate 1gbit' "
                        "(a kernel without sch_netem takes 'rate R' alone, as a tc tbf limit)")
    p.add_argument("--hosts", type=Path, metavar="FILE",
                   help="the hosts roles can be placed on: msgbench's TOML or an Ansible YAML inventory "
                        "(docs/hosts.md)")
    p.add_argument("--place", metavar="ROLE=HOST,...",
                   help="where each role runs, e.g. server=h2 (socket, with -p placement=remote), "
                        "broker=h1,sources=h2,receivers=h3 (pubsub); unplaced roles run here")


def _run_output_and_builds(p) -> None:
    """What a run prints, builds first, and measures beside it (builds, references, limits, probe)."""
    p.add_argument("--format", choices=VIEWS, default="table",
                   help="what to print when the run ends: the table, the seed documents' own text, "
                        "or a file format (as export writes it)")
    p.add_argument("--wide", action="store_true",
                   help="the table with every column: each point's min, max and parameters, however wide")
    p.add_argument("--no-build", action="store_true", help="do not build the targets first")
    p.add_argument("--dry-run", action="store_true",
                   help="measure nothing: each point of the plan with what one repetition cost in earlier runs, "
                        "and the planned total against the budget")
    p.add_argument("--build", action="append", default=[], metavar="TARGET:LABEL[=FOLDER]",
                   help="measure this build of a target's runtime (FOLDER first on PATH), interleaved with "
                        "the target's other builds; give it once per build, e.g. --build erlang:otp25=/usr/lib/"
                        "erlang/bin --build erlang:branch=/opt/otp/bin")
    p.add_argument("--builds", type=Path, metavar="FILE",
                   help="builds from a TOML file ([[build]] with target, label, path, env, args; docs/builds.md)")
    p.add_argument("--allow-skipped-builds", action="store_true",
                   help="measure the builds that can run when another cannot (a missing folder, a broken "
                        "runtime, a failed build); without it such a run stops before measuring anything")
    p.add_argument("--reference", action="store_true",
                   help="also run the reference tools (iperf3, sockperf, ...) at the same settings")
    p.add_argument("--limits", action="store_true",
                   help="first measure the machine's limits (memcpy, pipe ping-pong, loopback TCP) and keep "
                        "them with the run: the report sets the ceilings against them (docs/limits.md)")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the noise-floor probe (a second of pipe ping-pong before the run, whose spread "
                        "is stored and shown with the results)")


def _store_commands(command) -> None:
    """The store: the machine's limits, history, show, logs, export, import, delete."""
    p = command("limits", cmd_limits, "measure the machine's limits (memcpy, pipe ping-pong, loopback TCP) "
                                      "and store them as a run of their own (docs/limits.md)")
    p.add_argument("--seconds", type=float, default=machine_limits.DEFAULT_SECONDS,
                   help=f"time per measurement in s (default {machine_limits.DEFAULT_SECONDS:g})")
    p.add_argument("--no-build", action="store_true", help="do not build targets/c first")

    p = command("history", cmd_history, "the runs in the store, newest first; with --trend, a metric over "
                                        "the runs in time order, step changes marked")
    p.add_argument("--limit", type=_count, default=20, help="runs to list (default 20)")
    p.add_argument("--trend", metavar="WORKLOAD", help="a workload's metric over the stored runs, per point")
    p.add_argument("--target", help="with --trend: only this target")
    p.add_argument("--metric", help="with --trend: the metric (default: the workload's primary metric)")
    p = command("show", cmd_show, "one run's summary")
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("--format", choices=VIEWS, default="table",
                   help="the table, the seed documents' own text, or a file format (as export writes it)")
    p.add_argument("--wide", action="store_true",
                   help="the table with every column: each point's min, max and parameters, however wide")
    p.add_argument("--warnings", action="store_true",
                   help="list every warning of the run, one per line, most serious first (the table's summary "
                        "groups them)")
    p = command("logs", cmd_logs, "the logs of the services (brokers) a run started")
    p.add_argument("run", help="run id, unique prefix, or 'latest'")
    p.add_argument("name", nargs="?", help="one service's log, e.g. nats or nats#2 (default: list them)")
    p = command("export", cmd_export, "write a run as JSON, CSV, Markdown or the OTP page's format")
    p.add_argument("runs", nargs="+", help="run ids (or 'latest')")
    p.add_argument("--format", choices=registry.names(), default="json",
                   help="json: everything; csv: one row per measurement; md: the table for people, "
                        "with the document in a comment; otp: the Erlang/OTP page's format (fanin)")
    p.add_argument("-o", "--output", type=Path, help="file to write (default stdout)")
    p = command("import", cmd_import, "import runs: what export wrote, or what the OTP suite printed",
                "import runs into the store: what export wrote (JSON, CSV, Markdown, the OTP page's format) or "
                "what the OTP suite printed (large_throughput_benchmark's raw output, several runs pasted one "
                "after another, each kept as a run of its own); the same inputs as the results page takes")
    p.add_argument("file", type=Path, help="the file to read")
    p = command("delete", cmd_delete, "remove runs from the store, with their measurements and logs")
    p.add_argument("runs", nargs="+", help="run ids (or a unique prefix, or 'latest')")


def _comparison_commands(command) -> None:
    """Two runs or builds side by side: compare, and check as a CI gate."""
    p = command("compare", cmd_compare, "compare two runs or builds point by point, with a significance test; "
                                        "one run: each of its builds against its first")
    p.add_argument("run_a", metavar="A", help="a run (id, unique prefix or 'latest'), or RUN@BUILD for one build")
    p.add_argument("run_b", metavar="B", nargs="?", help="the other run or RUN@BUILD (default: A's builds "
                                                       "against its first)")
    p.add_argument("--metric", help="metric to compare (default: each workload's primary metric)")
    p = command("check", cmd_check, "fail (exit 1) when CANDIDATE is significantly worse than BASELINE by "
                                    "more than --max-slowdown at any point: a CI gate")
    p.add_argument("baseline", help="a run, or RUN@BUILD")
    p.add_argument("candidate", help="a run, or RUN@BUILD")
    p.add_argument("--max-slowdown", type=_percent, default=0.05, metavar="PERCENT",
                   help="how much worse a point may be before it fails the check (default 5%%)")
    p.add_argument("--metric", help="metric to check (default: each workload's primary metric)")


def _view_commands(command) -> None:
    """What people read: the HTML report and the results page."""
    p = command("report", cmd_report, "write a self-contained HTML report of runs (and PNGs)")
    p.add_argument("runs", nargs="+", help="run ids (or 'latest'); several runs are overlaid")
    p.add_argument("-o", "--output", type=Path, default=Path("report.html"), help="HTML file to write")
    p.add_argument("--png", type=Path, metavar="DIR", help="also write every graph as a PNG into DIR")
    p.add_argument("--title", help="the report's title")
    p = command("serve", cmd_serve, "the results page: paste, drop or pick runs and draw them together")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")


# ---------------------------------------------------------------- helpers


def _adhoc_scenario(args) -> suites.Scenario:
    wl = spec.workload(args.workload)
    params = {}
    for text in args.param:
        name, value = _parse_assignment(text, "parameter")
        params[name] = param_value(wl, name, value)
    if args.method:
        params["method"] = param_value(wl, "method", args.method)
    sweep, values = None, ()
    if args.sweep:
        if len(args.sweep) > 1:
            raise UsageError(f"--sweep is given {len(args.sweep)} times ({', '.join(args.sweep)}): a run sweeps one "
                             "parameter, its x axis; fix the others with -p, or make a suite of several scenarios")
        sweep, raw = _parse_assignment(args.sweep[0], "--sweep")
        values = tuple(param_value(wl, sweep, v) for v in raw.split(",") if v.strip())
        if not values:
            raise UsageError(f"--sweep {args.sweep[0]!r} lists no values")
    return suites.Scenario(name=wl.name, workload=wl.name, params=params, sweep=sweep, values=values)


# ---------------------------------------------------------------- commands


def cmd_doctor(args) -> int:
    text, all_ok = doctor.report()
    print(text)
    return EXIT_OK if all_ok else EXIT_FAILED


def cmd_tune(args) -> int:
    try:
        lines = tuning.revert() if args.revert else tuning.tune()
    except tuning.TuneError as exc:
        print(f"msgbench: {exc}", file=sys.stderr)
        return EXIT_FAILED
    print("\n".join(lines))
    return EXIT_OK


def cmd_list(args) -> int:
    """One line per workload, target and suite; a word keeps what it names, in full."""
    word = (args.filter or "").lower()
    long = args.long or bool(word)

    def named(*texts) -> bool:
        return not word or any(word in str(t).lower() for t in texts)

    workloads_ = [wl for wl in spec.workloads().values() if named(wl.name, wl.title)]
    targets_ = [t for t in targets.registry().values()
                if named(t.name, t.kind, t.language, *t.workloads, *t.variants)]
    suites_ = [name for name in suites.suite_names() if named(name)]
    if not (workloads_ or targets_ or suites_):
        known = [*spec.workloads(), *targets.registry(), *suites.suite_names()]
        close = difflib.get_close_matches(word, known, n=1)
        raise UsageError(f"list {args.filter!r} names no workload, target, variant or suite"
                         + (f"; did you mean {close[0]}?" if close else f"; known: {', '.join(known)}"))
    if workloads_:
        print("Workloads:")
    for wl in workloads_:
        print(f"  {wl.name:8} {wl.title} (seed {wl.seed})")
        if long:
            params = ", ".join(f"{n}={json.dumps(d['default'])}" for n, d in wl.params.items())
            print(f"           params: {params}")
    if targets_:
        print(("\n" if workloads_ else "") + "Targets (* the default variant; --variant NAME picks another):")
    for t in targets_:
        state = "" if not t.missing_requirements() else "  [not installed]"
        if not long:
            variants = ", ".join(v.name + ("*" if v.name == t.default_variant else "") for v in t.variants.values())
            print(f"  {t.name:8} {t.kind}, {', '.join(t.workloads)}: {variants}{state}")
            continue
        print(f"  {t.name:8} {t.kind}, {t.language}: {t.description}{state}")
        for v in t.variants.values():
            mark = "*" if v.name == t.default_variant else " "
            print(f"   {mark}{v.name:18} {v.label:9} {', '.join(v.workloads):14} {v.description}")
    if suites_:
        print(("\n" if workloads_ or targets_ else "") + "Suites:")
    for name in suites_:
        suite = suites.load_suite(name)
        print(f"  {name:8} {len(suite.scenarios)} scenarios" + (f": {suite.description}" if long else ""))
    if not long:
        print("\n(msgbench list WORD: only what WORD names, in full; --long: every detail)")
    return EXIT_OK


def cmd_build(args) -> int:
    chosen = ([targets.target(n) for n in args.target.split(",")] if args.target
              else list(targets.registry().values()))
    if args.jobs < 1:
        raise UsageError(f"--jobs {args.jobs} is out of range: it must be >= 1")
    wanted = []
    for t in chosen:
        missing = t.missing_requirements(services=False)
        if missing and not args.target:
            print(f"skip {t.name}: needs {', '.join(missing)} ({t.install_command()})", file=sys.stderr)
            continue
        wanted.append(t)
    steps = build_steps(wanted, chosen)
    print(f"building {len(steps)}: {', '.join(steps)} ({args.jobs} at a time)", file=sys.stderr)
    started = time.monotonic()
    done = building.build_all(steps, args.jobs, _build_times_file(), say=lambda line: print(line, file=sys.stderr))
    failed = [b for b in done if b.error is not None]
    for b in failed:
        print(f"msgbench: error: {b.error}", file=sys.stderr)
    print(f"build took {time.monotonic() - started:.0f} s; {len(done) - len(failed)} built"
          + (f", {len(failed)} failed: {', '.join(b.name for b in failed)}" if failed else ""), file=sys.stderr)
    return EXIT_FAILED if failed else EXIT_OK


def _build_logs() -> Path:
    return paths.builds_dir().parent / "build-logs"


def _build_times_file() -> Path:
    return paths.builds_dir().parent / "build-times.json"


def _target_steps(wanted, group: building.Yielding | None = None) -> dict:
    """A build step per target: its output kept in results/build-logs/TARGET.log, its
    compile jobs the machine's cores (one build alone uses them all, two side by side
    share them); group: the process groups of builds beside a run."""
    return {t.label: functools.partial(targets.build, t, log=_build_logs() / f"{t.label}.log", jobs=os.cpu_count(),
                                       group=group)
            for t in wanted}


def build_steps(wanted: list, served: list) -> dict:
    """A build step per target (_target_steps) and one per server kind's load generator
    that a served target needs."""
    steps = _target_steps(wanted)
    for kind in workload_runs.server_kinds():  # a server kind's load generator, for the targets that serve it
        if any(kind.refusal(t) is None for t in served):
            steps[f"{kind.generator_role} load generator"] = kind.build
    return steps


def cmd_run(args) -> int:
    if bool(args.workload) == bool(args.suite):
        raise UsageError("give a workload (msgbench run ring ...) or --suite NAME, not both or neither")
    target_names = _names(args.target, "--target")
    _names(args.variant, "--variant")
    if args.suite:
        if args.param or args.sweep:
            raise UsageError("-p and --sweep apply to a workload run, not to --suite")
        suite = suites.load_suite(args.suite)
        scenarios, repeat, warmup = suite.scenarios, args.repeat or suite.repeat, suite.warmup
        notes = list(suite.notes)
    else:
        scenarios, repeat, warmup, notes = [_adhoc_scenario(args)], args.repeat or 5, 1, []
        if args.repeat is not None and args.repeat < 1:
            raise UsageError(f"--repeat {args.repeat} is out of range: it must be >= 1")
    if args.warmup is not None:
        if args.warmup < 0:
            raise UsageError(f"--warmup {args.warmup} is out of range: it must be >= 0")
        warmup = args.warmup
    if args.reference:
        target_names = _with_reference_targets(target_names, scenarios)
    budget = _duration(args.budget, "--budget") if args.budget is not None else (
        suite.budget_s if args.suite else None)
    if budget is not None:
        if budget <= 0:
            raise UsageError(f"--budget {budget:g}s is not a time to spend: give a positive time, e.g. 4m")
        if args.precision is None:
            args.precision = DEFAULT_BUDGET_PRECISION
    min_time = _min_time(args, suite if args.suite else None)
    _check_precision(args, repeat)  # before builds.expand writes any build's folder
    declared = [builds.parse_option(text) for text in args.build]
    if args.builds:
        declared += builds.load_file(args.builds)
    declared_builds = builds.expand(declared)
    outside = [name for name in declared_builds if target_names and name not in target_names]
    if outside:  # refused, never dropped: the build was asked for by name
        raise UsageError(f"--build for {', '.join(outside)}, which --target {','.join(target_names)} does not "
                         f"include: add {' and '.join(outside)} to --target")
    plan = plan_run(scenarios, target_names, args.variant, repeat, warmup, args.timeout,
                    strict_targets=bool(target_names) and not args.reference,
                    builds=declared_builds)
    plan.notes = notes + plan.notes
    plan.budget_s, plan.min_time_s = budget, min_time
    if args.precision is not None:
        plan.precision, plan.max_repeat = args.precision, args.max_repeat
    if args.remote is not None and (not args.remote or args.remote.startswith("-")):
        raise UsageError(f"--remote {args.remote!r}: give USER@HOST or a host name (not empty, not starting "
                         "with '-', which ssh would read as an option)")
    plan.remote, plan.remote_dir, plan.netem = args.remote, args.remote_dir, args.netem
    if args.hosts and args.remote:
        raise UsageError("--remote and --hosts both say where the server runs: give one (--hosts with --place)")
    cliargs.place(plan, args)
    plan.check_placement(strict=not args.suite)
    for skipped in plan.skipped:
        print(f"msgbench: skipping: {skipped}", file=sys.stderr)
    if args.dry_run:
        return _print_plan(plan, _store(args))
    beside = None
    if not args.no_build and not declared_builds:  # built beside the run, each scenario once its targets are
        beside = _builds_beside(plan)
    elif not args.no_build:  # a builds run: every build known to build before the run compares them
        for kind in {workload_runs.server_kind(j.scenario.workload, j.params) for j in plan.jobs} - {None}:
            kind.build()  # its load generator
        for t in {j.target.label: j.target for j in plan.jobs}.values():
            # A line per build: a compiler can take a while, and nothing is silent for long.
            print(f"msgbench: building {t.label}" + (f" in {t.folder}" if t.build_of else ""), file=sys.stderr)
            if not t.build_of:
                targets.build(t)
                continue
            try:
                targets.build(t)
                builds.mark_built(t)
            except targets.TargetError as exc:  # one build that fails leaves the others to run
                print(f"msgbench: skipping: {exc}", file=sys.stderr)
                drop_target(plan, t.label, f"build {t.label} failed to build: {str(exc).splitlines()[0]}")
    else:
        for t in {j.target.label: j.target for j in plan.jobs}.values():
            if builds.unbuilt(t):
                raise UsageError(f"--no-build: build {t.label} has never been built in its folder {t.folder}; "
                                 "run once without --no-build")
    _refuse_skipped_builds(plan, declared_builds, args.allow_skipped_builds)
    if args.limits:
        plan.limits = _measure_limits(machine_limits.DEFAULT_SECONDS, build=not args.no_build)
    measured_cpus = cpus.layout(plan.cpu_policy).measured
    if beside and not args.no_probe:  # on the machine without the builds, once they have ended
        beside.on_quiet = lambda: {"noise_floor": probe.measure(measured_cpus)}
    elif not args.no_probe:
        plan.noise_floor = probe.measure(measured_cpus)
    store = _store(args)
    _say_estimate(plan, store)
    if beside:
        beside.builder.start()
    shown = _scenario_rows(store, args.wide) if args.format == "table" else None
    try:
        run_id, status = execute(plan, store, args.suite, beside=beside, on_scenario=shown)
    finally:
        if beside:  # a run that ended early: builds not started never will be, running ones end
            beside.builder.cancel()
            beside.yielding.stop()
    if beside and beside.builder.ended_at is not None:
        phases.span("builds", beside.builder.began_at, beside.builder.ended_at)
    doc = results.run_document(store, [run_id])
    _print_run(doc, args.format, args.wide)
    print(f"\nrun {run_id} ({status}) stored in {store.path}", file=sys.stderr)
    if status == "interrupted":
        print("msgbench: interrupted; what was measured before is kept", file=sys.stderr)
        return EXIT_INTERRUPTED
    bad = [s for s in doc["runs"][0]["summary"] if s["status"] not in ("ok", "unsupported")]
    return EXIT_FAILED if bad else EXIT_OK


# A repetition longer than this is no longer a quick one (a JVM's start is about a second
# of it); the dry run marks it.
QUICK_REPETITION_S = 5.0


def _print_plan(plan, store) -> int:
    """--dry-run: each point, what one repetition cost in the store's recent runs (the
    worker's wall time; the harness adds a little), and the planned total."""
    walls = eta.each(plan.jobs, store)
    rows = [["point", "repetitions", "each", "point total"]]
    total, unknown = 0.0, 0
    for job, wall in zip(plan.jobs, walls, strict=True):
        count = job.warmup + job.repeat
        if wall is None:
            unknown += 1
        else:
            total += wall * count
        flag = " (long)" if wall is not None and wall > QUICK_REPETITION_S else ""
        rows.append([job.label, str(count), "never measured" if wall is None else f"{wall:.1f} s{flag}",
                     "" if wall is None else f"{wall * count:.0f} s"])
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip())
    line = f"planned: {len(plan.jobs)} points, {duration(total)} of repetitions"
    if unknown:
        line += f" and {unknown} point{'s' if unknown != 1 else ''} never measured"
    if plan.budget_s is not None:
        line += (f"; budget {duration(plan.budget_s)}: the planned repetitions always run, added ones only "
                 "within it")
    print(line)
    return EXIT_OK


def _builds_beside(plan) -> BuildsBeside:
    """The builds of the plan's targets (and of a server kind's load generator), as many at
    a time as the machine has cores, at idle priority while a measurement runs; not started
    yet. Each scenario waits for its own."""
    chosen = {j.target.label: j.target for j in plan.jobs}
    yielding = building.Yielding()
    steps = _target_steps(chosen.values(), group=yielding)
    kinds = {workload_runs.server_kind(j.scenario.workload, j.params) for j in plan.jobs} - {None}
    for kind in kinds:
        steps[f"{kind.generator_role} load generator"] = kind.build

    def needs(job) -> list[str]:
        kind = workload_runs.server_kind(job.scenario.workload, job.params)
        return [job.target.label] + ([f"{kind.generator_role} load generator"] if kind else [])

    print(f"msgbench: building {len(steps)} beside the run, {os.cpu_count() or 1} at a time, at idle priority while "
          "it measures "
          f"(each build's output in {_build_logs()}); each scenario starts once its targets are built",
          file=sys.stderr)
    builder = building.Builder(steps, os.cpu_count() or 1, _build_times_file(),
                               say=lambda line: print(f"msgbench: {line}", file=sys.stderr))
    return BuildsBeside(builder, needs, yielding)


def _scenario_rows(store, wide: bool):
    """What a scenario's rows look like as soon as its planned repetitions end (the full
    table, with the extra repetitions, comes at the end); the first one is marked in
    $MSGBENCH_PHASES for make run's timing line."""
    def show(run_id: str, scenario: str) -> str:
        summary = [s for s in results.run_document(store, [run_id])["runs"][0]["summary"]
                   if s["scenario"] == scenario]
        out = io.StringIO()
        for table in screen.summary_tables(summary, wide):
            tables.write(table, out, wide=wide)
        phases.mark("first table row")
        return (f"{scenario}: its planned repetitions are done (the whole table, with any added ones, at the "
                f"end)\n{out.getvalue().rstrip()}")
    return show


def _say_estimate(plan, store) -> None:
    """Before a long run: how long it should take, from earlier runs of the same points."""
    guess = eta.estimate(plan.jobs, store)
    if guess.seconds >= eta.WORTH_SAYING_S and guess.text():
        print(f"msgbench: {guess.text()}", file=sys.stderr)
    if plan.budget_s is not None and guess.seconds > plan.budget_s:  # the budget cannot hold them back
        print(f"msgbench: the planned repetitions alone should take {duration(guess.seconds)}, over the "
              f"{duration(plan.budget_s)} budget, which bounds only the repetitions added after them",
              file=sys.stderr)


def _refuse_skipped_builds(plan, declared: dict, allowed: bool) -> None:
    """A builds run exists to compare its builds: one that cannot run (missing folder, broken
    runtime, failed build) leaves a run with nothing to compare it with, so it stops the run
    before anything is measured, unless --allow-skipped-builds."""
    running = {j.target.label for j in plan.jobs}
    missing = [t.label for ts in declared.values() for t in ts if t.label not in running]
    if not missing or allowed:
        return
    reasons = [s for s in plan.skipped if any(label in s for label in missing)]
    raise UsageError(f"build{'s' if len(missing) > 1 else ''} {', '.join(missing)} cannot run"
                     f"{' (' + '; '.join(reasons) + ')' if reasons else ''}: fix "
                     f"{'them' if len(missing) > 1 else 'it'}, or pass --allow-skipped-builds to measure the others")


def _min_time(args, suite) -> float:
    """--min-time, else the suite's, else $MSGBENCH_MIN_TIME, else the default."""
    if args.min_time is not None:
        return _duration(args.min_time, "--min-time")
    if suite is not None and suite.min_time_s is not None:
        return suite.min_time_s
    text = os.environ.get("MSGBENCH_MIN_TIME")
    return calibrate.DEFAULT_MIN_TIME_S if text is None else _duration(text, "MSGBENCH_MIN_TIME")


def _duration(text: str, option: str) -> float:
    """A time as people write it: 90, 90s, 500ms, 4m, 1h (seconds when it has no unit)."""
    match = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ms|s|m|min|h)?\s*", text)
    if not match:
        raise UsageError(f"{option} {text!r} is not a time: give a number with ms, s, m or h, e.g. 4m or 0.5s")
    scale = {"ms": 0.001, "s": 1, None: 1, "m": 60, "min": 60, "h": 3600}[match.group(2)]
    return float(match.group(1)) * scale


# --max-repeat's ceiling: past a few hundred repetitions a point's interval shrinks by
# under 1% per hundred more, while the run grows without bound (docs/decisions.md).
MAX_REPEAT_LIMIT = 1000


def _check_precision(args, repeat: int) -> None:
    """--precision and --max-repeat, refused before anything is written."""
    if not 1 <= args.max_repeat <= MAX_REPEAT_LIMIT:
        raise UsageError(f"--max-repeat {args.max_repeat} is out of range: it takes 1 to {MAX_REPEAT_LIMIT:,}")
    if args.precision is None:
        return
    if args.precision <= 0:
        raise UsageError("--precision must be above 0%, e.g. 2%")
    if args.max_repeat < repeat:
        raise UsageError(f"--max-repeat {args.max_repeat} is below the {repeat} repetitions planned")


def _positive_seconds(text: str) -> float:
    """--timeout: a positive, finite number of seconds (argparse turns the error into one line)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a time limit: give a positive number of seconds, "
                                         f"e.g. {DEFAULT_TIMEOUT_S:g}")
    return value


def _with_reference_targets(names: list[str] | None, scenarios) -> list[str]:
    """The chosen targets plus every reference target that implements a scenario's workload."""
    wanted = {s.workload for s in scenarios}
    chosen = list(names) if names else [t.name for t in targets.registry().values()
                                        if t.kind != "reference" and wanted & set(t.workloads)]
    chosen += [t.name for t in targets.registry().values()
               if t.kind == "reference" and wanted & set(t.workloads) and t.name not in chosen]
    return chosen


def _print_run(doc: dict, fmt: str, wide: bool = False) -> None:
    run = doc["runs"][0]
    if fmt == "table":
        _print_table(run, wide)
        answers = screen.answers(doc)
        if answers:  # last, as hyperfine ends: the short answer per scenario
            print("\nin short:\n" + "\n".join(f"  {line}" for line in answers))
    elif fmt == "seed":
        _print_seed_form(run)
    elif fmt == "md":  # on the terminal, without the document for import at its end
        print(markdown.render(doc, embed=False))
    else:
        print(registry.FORMATS[fmt].render(doc))


def _print_seed_form(run: dict) -> None:
    """Each workload's points as its seed document printed them (ring and chat: each
    measurement's block; fanin: the OTP page's format); the others as the table."""
    others = []
    for name in workloads.order({s["workload"] for s in run["summary"]}):
        text = workloads.plugin(name).seed_text(run)
        if text is None:
            others += [s for s in run["summary"] if s["workload"] == name]
        elif text:
            print(text)
    if others:
        names = workloads.order({s["workload"] for s in others})
        print(f"({', '.join(names)}: no seed text format{'s' if len(names) > 1 else ''}; the table instead)",
              file=sys.stderr)
        for table in screen.summary_tables(others):
            tables.write(table)


def _print_table(run: dict, wide: bool = False) -> None:
    for note in run["notes"]:
        print(f"note: {note}")
    for line in screen.method_lines(run):
        print(line)
    for index, table in enumerate(screen.summary_tables(run["summary"], wide)):
        if index:
            print()
        tables.write(table, wide=wide)
    legend = screen.legend(run["summary"])
    if legend:
        print(f"\n{legend}")
    summary = screen.warning_summary(run)
    if summary:
        print("\n" + "\n".join(summary))
    floor = probe.line(run["metadata"].get("noise_floor"))
    if floor:
        print(f"\n{floor}")


def _measure_limits(seconds: float, build: bool, out=None) -> dict:
    try:
        measured = machine_limits.measure(seconds, build=build)
    except machine_limits.LimitsError as exc:
        raise UsageError(str(exc)) from None
    for line in machine_limits.lines(measured):
        print(f"limits: {line}", file=out or sys.stderr)
    return measured


def cmd_limits(args) -> int:
    measured = _measure_limits(args.seconds, build=not args.no_build, out=sys.stdout)
    store = _store(args)
    default = args.seconds == machine_limits.DEFAULT_SECONDS
    command = "msgbench limits" + ("" if default else f" --seconds {args.seconds:g}")
    run_id = machine_limits.store_run(store, command, measured)
    print(f"\nrun {run_id} stored in {store.path}: give it to msgbench report with the runs whose ceilings "
          "it measures", file=sys.stderr)
    return EXIT_OK


def cmd_history(args) -> int:
    store = _store(args)
    if args.trend:
        return _print_trend(store, args)
    if args.target or args.metric:
        raise UsageError("--target and --metric go with --trend WORKLOAD")
    rows = [[r["id"], r["created_at"], r["status"], r["suite"] or "", str(r["measured"]),
             machine_name(r["metadata"] or {}), r["command"][:70]] for r in store.runs(args.limit)]
    if not rows:
        print(f"no runs in {store.path} yet: try `msgbench run --suite quick`")
        return EXIT_OK
    tables.write(tables.Table(["run", "started", "status", "suite", "measured", "machine", "command"], rows))
    return EXIT_OK


def _print_trend(store, args) -> int:
    spec.workload(args.trend)  # an unknown workload is named with the known ones
    found = trend.trend(store, args.trend, args.target, args.metric)
    if not found:
        print(f"no stored run measured {args.trend}" + (f" on {args.target}" if args.target else ""))
        return EXIT_OK
    for series in found:
        print(f"{series.workload} {series.scenario} {series.label} {series.point}: {series.metric} "
              f"({series.better} is better)")
        rows = []
        for e in series.entries:
            change = "" if e.change is None else f"{e.change:+.1%}"
            mark = "" if e.p_value is None else (f"step (p = {e.p_value:.3f})" if e.step else f"p = {e.p_value:.2f}")
            rows.append([e.run_id, e.started, tables.human(e.median), str(len(e.values)), change, mark])
        print(tables.render(["run", "started", "median", "n", "change", "vs previous"], rows) + "\n")
    return EXIT_OK


def cmd_show(args) -> int:
    store = _store(args)
    doc = results.run_document(store, [store.resolve(args.run)])
    run = doc["runs"][0]
    if args.warnings:
        lines = screen.all_warnings(run)
        print("\n".join(lines) if lines else f"run {run['id']} has no warnings")
        return EXIT_OK
    if args.format not in ("table", "seed"):  # a document: nothing before it
        _print_run(doc, args.format)
        return EXIT_OK
    meta = run["metadata"]
    print(f"run {run['id']} ({run['status']}) started {run['created_at']}")
    print(f"command: {run['command']}")
    if run.get("imported_from"):
        print(f"imported from: {run['imported_from']}")
    print(f"machine: {machine_text(meta)}")
    for name, version in sorted((meta.get("runtimes") or {}).items()):
        print(f"{name}: {version}")
    for alias, line in hosts.describe(meta.get("hosts")):
        print(f"host {alias}: {line}")
    if run["logs"]:
        print(f"service logs: {', '.join(run['logs'])} (msgbench logs {run['id']} NAME)")
    print()
    _print_run(doc, args.format, args.wide)
    view = capacity_view.of_run(run)
    if view is not None and args.format == "table":  # a capacity search: its answer and curves after the steps
        print("\n" + "\n".join(capacity_view.lines(view)))
    return EXIT_OK


def cmd_logs(args) -> int:
    store = _store(args)
    run_id = store.resolve(args.run)
    logs = store.logs(run_id)
    if args.name is None:
        for name, text in logs.items():
            print(f"{name}: {len(text.splitlines()):,} lines")
        if not logs:
            print(f"run {run_id} started no services")
        return EXIT_OK
    if args.name not in logs:
        known = ", ".join(logs) or "none"
        print(f"msgbench: run {run_id} has no log {args.name!r}; its logs: {known}", file=sys.stderr)
        return EXIT_USAGE
    print(logs[args.name], end="")
    return EXIT_OK


def cmd_export(args) -> int:
    store = _store(args)
    doc = results.run_document(store, [store.resolve(r) for r in args.runs])
    if args.format == "otp" and not otp.has_results(doc):  # an empty document would read as "nothing measured"
        raise UsageError(f"{', '.join(r['id'] for r in doc['runs'])}: no fanin results, and --format otp "
                         "writes only those (the OTP page's format); --format json, csv or md write any run")
    text = registry.FORMATS[args.format].render(doc)
    if args.output:
        write_output(args.output, text)
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
    return EXIT_OK


def cmd_import(args) -> int:
    try:
        data = args.file.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {args.file}: {exc.strerror}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{args.file}: not a msgbench results document: not UTF-8 text "
                         f"(byte 0x{data[exc.start]:02x} at offset {exc.start})") from None
    if "\0" in text:
        raise UsageError(f"{args.file}: not a msgbench results document: a binary file (it holds NUL bytes)")
    try:
        runs = registry.read(text, str(args.file))["runs"]
    except registry.FormatError as exc:
        raise UsageError(f"{args.file}: {exc}") from None
    store = _store(args)
    for run_id, run in zip(store.import_runs(runs, str(args.file)), runs, strict=True):  # all or none
        print(f"imported run {run_id} ({len(run['measurements'])} measurements)")
    return EXIT_OK


def cmd_delete(args) -> int:
    store = _store(args)
    run_ids = [store.resolve(ref) for ref in args.runs]  # every one known before any goes
    for run_id in dict.fromkeys(run_ids):
        count = store.delete_run(run_id)
        print(f"deleted run {run_id} ({count} measurements)")
    return EXIT_OK


def write_output(path: Path, text: str) -> None:
    """Write a file the user named, or say in one line why it cannot be written."""
    try:
        path.write_text(text)
    except OSError as exc:
        raise UsageError(f"cannot write {path}: {exc.strerror or exc}") from None


def _side(store, ref: str) -> compare.Side:
    """A side of a comparison from RUN or RUN@BUILD."""
    run_ref, sep, build = ref.partition("@")
    run_id = store.resolve(run_ref)
    run = results.run_document(store, [run_id])["runs"][0]
    if not sep:
        return compare.side(run)
    known = compare.builds_of(run)
    if build not in known:
        raise UsageError(f"run {run_id} has no build {build!r}; its builds: {', '.join(known) or 'none'}")
    return compare.side(run, build)


def _comparison(store, a_ref: str, b_ref: str | None, metric: str | None) -> tuple[list[dict], str]:
    pairs, title = _side_pairs(store, a_ref, b_ref)
    _known_metric(metric, [m for pair in pairs for side in pair for m in side.measurements])
    return [row for a, b in pairs for row in compare.compare(a, b, metric)], title


def _side_pairs(store, a_ref: str, b_ref: str | None) -> tuple[list[tuple[compare.Side, compare.Side]], str]:
    """The two sides named (RUN, RUN@BUILD), or a run's first build with each of its others."""
    if b_ref is None:
        run_id = store.resolve(a_ref.partition("@")[0])
        run = results.run_document(store, [run_id])["runs"][0]
        builds = compare.builds_of(run)
        if len(builds) < 2:
            raise UsageError(f"run {run_id} measured {len(builds)} named builds: give two runs (or "
                             "RUN@BUILD twice) to compare, or a run of several --build")
        first = compare.side(run, builds[0])
        return ([(first, compare.side(run, other)) for other in builds[1:]],
                f"builds of run {run_id} against {builds[0]}")
    a, b = _side(store, a_ref), _side(store, b_ref)
    if "@" not in a_ref or "@" not in b_ref or a.name == b.name:  # runs: the title says which is which
        a, b = compare.Side("A", a.measurements), compare.Side("B", b.measurements)
    return [(a, b)], f"A = {a_ref}, B = {b_ref}"


def _known_metric(metric: str | None, measurements: list[dict]) -> None:
    """--metric must name a metric of a workload compared (a typo would compare nothing)."""
    if metric is None:
        return
    names = {w: spec.workload(w).metrics for w in {m["workload"] for m in measurements}
             if w in spec.workloads()}
    if any(metric in known for known in names.values()):
        return
    accepted = sorted({n for known in names.values() for n in known})
    close = difflib.get_close_matches(metric, accepted, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    raise UsageError(f"--metric {metric!r} is no metric of {', '.join(sorted(names)) or 'these runs'}: "
                     f"{hint}accepted: {', '.join(accepted)}")


def _print_comparison(rows: list[dict], title: str) -> None:
    print(f"{title}; Mann-Whitney U test, two-sided, alpha = {compare.ALPHA}\n")
    table = [[r["workload"], r["point"], f"{r['target']}/{r['variant']}", r["metric"], r["a"], r["b"],
              tables.human(r.get("median_a")), tables.human(r.get("median_b")),
              f"{r['ratio']:.3f}" if r.get("ratio") else "-", r["verdict"]] for r in rows]
    # On a terminal: the verdict wraps; the metric (in the title of --metric) and the sides'
    # names (in the title) go first when it is narrow.
    tables.write(tables.Table(["workload", "point", "target/variant", "metric", "A", "B", "median A",
                               "median B", "B/A", "verdict"], table, wrap={"point", "verdict"},
                              optional=("A", "B", "metric", "workload")))


def _print_answers(rows: list[dict]) -> None:
    """The short answer per point, from the same judgement as the table's verdicts."""
    print()
    for r in rows:
        answer = r["judgement"].text if "judgement" in r else r["verdict"]
        print(f"{r['workload']} {r['point']} {r['target']}/{r['variant']}: {answer}")


def cmd_compare(args) -> int:
    store = _store(args)
    rows, title = _comparison(store, args.run_a, args.run_b, args.metric)
    if not rows:
        print(f"{title}: no point in common (same workload, target, variant and parameters)")
        return EXIT_FAILED
    _print_comparison(rows, title)
    _print_answers(rows)
    _print_machine_drift(store, args.run_a, args.run_b)
    return EXIT_OK


def _print_machine_drift(store, a_ref: str, b_ref: str | None) -> None:
    """When two runs' noise floors say the machine itself changed speed between them."""
    if b_ref is None:
        return  # a run's builds: measured interleaved, on one machine at one time
    floors = [store.run(store.resolve(ref.partition("@")[0]))["metadata"].get("noise_floor") for ref in (a_ref, b_ref)]
    line = probe.drift_line(*floors)
    if line:
        print(f"\n{line}")


def cmd_check(args) -> int:
    """Three outcomes, each its exit code (compare.CHECK_EXIT): no regression, regression,
    inconclusive; a candidate that lacks a baseline point or whose repetitions all failed
    is an error, as it can show nothing."""
    store = _store(args)
    rows, title = _comparison(store, args.baseline, args.candidate, args.metric)
    if not rows:
        raise UsageError(f"{title}: no point in common (same workload, target, variant and parameters): "
                         "nothing to check")
    pairs, _ = _side_pairs(store, args.baseline, args.candidate)
    lacking = [(b.name, point) for a, b in pairs for point in compare.missing(a, b)]
    if lacking:
        raise UsageError(f"candidate {lacking[0][0]} did not measure {len(lacking)} of the baseline's points "
                         f"({lacking[0][1]}{', ...' if len(lacking) > 1 else ''}): nothing to check there")
    failed = compare.without_numbers(rows)
    if failed:
        r = failed[0]
        raise UsageError(f"candidate {r['b']} has no successful repetition of {r['metric']} at "
                         f"{len(failed)} point(s) ({r['workload']} {r['point']} {r['target']}/{r['variant']}: "
                         f"{r['verdict']}): nothing to check there")
    _print_comparison(rows, title)
    for r in rows:
        r["check"] = compare.check_outcome(r, args.max_slowdown)
    _print_answers(rows)
    outcome, answer = compare.check_summary(rows, args.max_slowdown)
    worse = [r for r in rows if r["check"] == compare.REGRESSION]
    print(f"\ncheck: {answer}" + (":" if worse else ""))
    for r in worse:
        print(f"  {r['workload']} {r['point']} {r['target']}/{r['variant']}: {r['verdict']}")
    _print_machine_drift(store, args.baseline, args.candidate)
    return compare.CHECK_EXIT[outcome]


def _count(text: str) -> int:
    """--limit: a whole number from 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a count: give a whole number from 1, e.g. 20")
    return value


def cmd_report(args) -> int:
    from msgbench.views import report

    store = _store(args)
    doc = results.run_document(store, [store.resolve(r) for r in args.runs])
    try:
        args.output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    history = report.history(store, doc)  # the History section: earlier runs of these scenarios
    write_output(args.output, report.render_html(doc, title=args.title, history=history))
    print(f"report: {args.output.resolve()}")
    if args.png:
        try:
            written = report.write_pngs(doc, args.png, history)
        except OSError as exc:
            raise UsageError(f"cannot write the PNGs into {args.png}: {exc.strerror or exc}") from None
        print(f"{len(written)} PNG files in {args.png.resolve()}")
    return EXIT_OK


def cmd_serve(args) -> int:
    from msgbench.views import web
    from msgbench.views.web.server import StoreUnusable

    path = args.store or default_store_path()
    Store(path).close()  # a store that cannot be used is said now, in one line, not on the page

    # The page's server answers on several threads; an SQLite connection belongs to
    # the thread that opened it, so each request opens the store afresh.
    def opened() -> Store:
        try:
            return Store(path)
        except StoreError as exc:  # broken since the server started: not "no such run"
            raise StoreUnusable(str(exc)) from None

    def list_runs() -> list[dict]:
        store = opened()
        try:
            return store.runs()
        except sqlite3.Error as exc:
            raise StoreUnusable(str(storefile.problem(store.path, exc))) from None
        finally:
            store.close()

    def load_run(run_id: str) -> dict:
        store = opened()
        try:
            return results.run_document(store, [store.resolve(run_id)])
        except sqlite3.Error as exc:
            raise StoreUnusable(str(storefile.problem(store.path, exc))) from None
        finally:
            store.close()

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port} is out of range: it must be from 0 to 65,535")
    try:
        web.serve(args.host, args.port, list_runs, load_run)
    except OSError as exc:
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {exc.strerror}") from None
    return EXIT_OK
