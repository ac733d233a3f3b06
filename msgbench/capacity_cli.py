"""The `capacity` command: its options, and from them a capacity search (capacity_run.py)."""

import sys
from pathlib import Path

from msgbench import cliargs
from msgbench.core import spec
from msgbench.data import results
from msgbench.running import capacity, capacity_run, probe
from msgbench.running import workloads as workload_runs
from msgbench.views import capacity_view
from msgbench.workers import cpus, targets

EXAMPLES = ("msgbench capacity pubsub --target nats,redis --slo p99=5ms -p payload_bytes=1024; "
            "msgbench capacity chat --target erlang,go --slo p99=50ms (users at think_ms=5000)")


def register(command) -> None:
    """Add the command to cli's parser (command: cli's helper that makes a sub-parser)."""
    p = command("capacity", cmd_capacity,
                "the highest load each system holds under a latency bound, and the curve that leads there",
                "search each system's capacity: a doubling ramp, then bisection, each step a verified "
                "measurement stored as it ends, the top confirmed by repeated runs; e.g. " + EXAMPLES)
    p.add_argument("workload", help="pubsub (offered message rate) or chat (users, or message rate at fixed users)")
    p.add_argument("--slo", action="append", required=True, metavar="BOUND",
                   help="the bound: a percentile's latency, e.g. p99=5ms (p50, p99.9, ...), and optionally a loss "
                        "ratio every variant must keep, e.g. loss=0 (a lossless variant loses nothing anyway)")
    p.add_argument("--target", help="comma-separated targets (default: every installed one)")
    p.add_argument("--variant", help="default, all, or comma-separated variant names")
    p.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a fixed parameter (repeatable), e.g. -p payload_bytes=1024 -p duration_s=3")
    p.add_argument("--load", help="what is searched: pubsub: rate; chat: users (default; at -p think_ms, default "
                                  "5000) or rate (at -p groups x clients_per_group users)")
    p.add_argument("--start", type=float, help="the first load (default: pubsub 1000 msg/s; chat 10 groups' "
                                               "users; chat rate: every user once in 5 s)")
    p.add_argument("--precision", default="2%", metavar="PERCENT",
                   help="stop bisecting when the bracket is this narrow relative to its bottom (default 2%%)")
    p.add_argument("--confirm", type=int, default=capacity.DEFAULT_CONFIRM, metavar="N",
                   help=f"runs at the top load, all of which must hold (default {capacity.DEFAULT_CONFIRM})")
    p.add_argument("--max-steps", type=int, default=capacity.DEFAULT_MAX_STEPS, metavar="N",
                   help=f"at most N steps per system (default {capacity.DEFAULT_MAX_STEPS})")
    p.add_argument("--warmup", type=int, default=0, help="discarded warm-up runs at each new load (default 0)")
    p.add_argument("--timeout", type=float, help="time limit per worker in s")
    p.add_argument("--cpus", default=cpus.DEFAULT_RUN_POLICY, metavar="POLICY",
                   help=f"where the processes run (as run's --cpus; default {cpus.DEFAULT_RUN_POLICY})")
    p.add_argument("--no-build", action="store_true", help="do not build the targets first")
    p.add_argument("--hosts", type=Path, metavar="FILE",
                   help="the hosts roles can be placed on (as run's --hosts; docs/hosts.md)")
    p.add_argument("--place", metavar="ROLE=HOST,...", help="where each role runs (as run's --place)")
    p.add_argument("--no-probe", action="store_true",
                   help="skip the noise-floor probe; with it, the bisection stops at the wider of --precision "
                        "and the machine's noise floor (its cv)")
    p.add_argument("--brief", action="store_true", help="only each system's capacity, no curve")


def settings_from(args) -> capacity_run.Settings:
    from msgbench.cliargs import UsageError, param_value
    from msgbench.cliargs import parse_assignment as _parse_assignment
    from msgbench.cliargs import percent as _percent

    try:
        slo = capacity.parse_slo(args.slo)
        axis = capacity_run.axis_for(args.workload, args.load)
    except (capacity.SloError, capacity_run.AxisError) as exc:
        raise UsageError(str(exc)) from None
    wl = spec.workload(args.workload)
    given = {}
    for text in args.param:
        name, value = _parse_assignment(text, "parameter")
        given[name] = param_value(wl, name, value)
    try:
        base = capacity_run.base_params(axis, given)
    except capacity_run.AxisError as exc:
        raise UsageError(str(exc)) from None
    precision = _percent(args.precision)
    if not 0 < precision < 1:
        raise UsageError(f"--precision {args.precision}: give a percentage above 0 and below 100, e.g. 2%")
    for name, value, least in (("--confirm", args.confirm, 1), ("--max-steps", args.max_steps, 2),
                               ("--warmup", args.warmup, 0)):
        if value < least:
            raise UsageError(f"{name} {value} is out of range: it must be >= {least}")
    if args.start is not None and args.start <= 0:
        raise UsageError(f"--start {args.start:g}: the first load must be positive")
    return capacity_run.Settings(slo=slo, axis=axis, base=base, start=args.start, precision=precision,
                                 confirm=args.confirm, max_steps=args.max_steps, warmup=args.warmup,
                                 timeout_s=args.timeout)


def cmd_capacity(args) -> int:
    from msgbench.cliargs import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK
    from msgbench.cliargs import names as _names
    from msgbench.cliargs import open_store as _store

    settings = settings_from(args)
    the_plan, scenario = capacity_run.plan(settings, _names(args.target, "--target"), args.variant)
    cliargs.place(the_plan, args)
    the_plan.check_placement(strict=True)
    if not args.no_build:
        for kind in {workload_runs.server_kind(j.scenario.workload, j.params) for j in the_plan.jobs} - {None}:
            kind.build()  # its load generator
        for t in {j.target.label: j.target for j in the_plan.jobs}.values():
            print(f"msgbench: building {t.label}", file=sys.stderr)
            targets.build(t)
    if not args.no_probe:
        the_plan.noise_floor = probe.measure(cpus.layout(the_plan.cpu_policy).measured)
        within_noise(settings, the_plan)
    store = _store(args)
    print(f"msgbench: capacity of {', '.join(j.target.label + '/' + j.variant.name for j in the_plan.jobs)} "
          f"under {settings.slo.describe()}", file=sys.stderr)
    run_id, status, found = capacity_run.run(settings, the_plan, scenario, store)
    doc = results.run_document(store, [run_id])
    view = capacity_view.of_run(doc["runs"][0])
    if view is not None:
        print("\n".join(capacity_view.lines(view, detail=not args.brief)))
    print(f"\nrun {run_id} ({status}) stored in {store.path}: msgbench show {run_id} lists every step; "
          f"msgbench report {run_id} draws the curves", file=sys.stderr)
    if status == "interrupted":
        return EXIT_INTERRUPTED
    broken = any(r["status"] == capacity.FAILED for r in found.values())  # no step measured anything
    return EXIT_OK if status == "complete" and not broken else EXIT_FAILED


def within_noise(settings: capacity_run.Settings, the_plan) -> None:
    """Bisect no finer than the machine's noise: the wider of --precision and the noise
    floor's cv (a finer bracket would be decided by the machine, not the system)."""
    floor = the_plan.noise_floor or {}
    line = probe.line(floor)
    if line:
        print(f"msgbench: {line}", file=sys.stderr)
    cv = floor.get("cv")
    if isinstance(cv, (int, float)) and cv > settings.precision:
        print(f"msgbench: bisecting to {cv:.1%}, the noise floor, rather than {settings.precision:.1%}",
              file=sys.stderr)
        settings.precision = min(float(cv), 0.5)
    the_plan.metadata["capacity"]["precision"] = settings.precision
