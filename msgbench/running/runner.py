"""The runner: plan a run, check it before anything starts, then measure.

Every measurement is a fresh worker. Warm-up repetitions run first and are stored
but never summarised. A run goes scenario by scenario; within one, its targets are
interleaved (A B A B ...) so that drift in the machine's state hits every target it
compares alike, and its rows can be shown as soon as its planned repetitions end. Each
measurement is stored the moment it ends; Ctrl-C stops the current worker's whole
process group and keeps the rest. With builds beside the run (beside.py), a scenario
starts once its targets are built.
"""

import contextlib
import math
import os
import resource
import shlex
import statistics
import sys
import time
from dataclasses import dataclass, field

from msgbench.core import expr, interrupts, spec, tempdirs
from msgbench.data import noise, points, stats
from msgbench.data.store import Store, now_iso
from msgbench.hosts import inventory as hosts
from msgbench.hosts import placement
from msgbench.running import calibrate, services
from msgbench.running import workloads as workload_runs
from msgbench.running.beside import BuildsBeside
from msgbench.running.progress import Progress
from msgbench.running.suites import Scenario
from msgbench.workers import cpus, procs, sysinfo, targets
from msgbench.workers.worker import Outcome, run_worker

DEFAULT_TIMEOUT_S = 300.0
# The precision a run with a --budget aims for when no --precision is given: the 95% CI
# of each point's mean within ±1%, where a 2-core machine's quiet points get in seconds.
DEFAULT_BUDGET_PRECISION = 0.01
MEMORY_HEADROOM = 0.9  # refuse a run whose estimate passes this share of the machine's RAM


class PlanError(ValueError):
    """The run cannot start: bad parameters, unknown names, or it will not fit."""


@dataclass
class Job:
    """One point of one scenario on one target variant, repeated."""

    scenario: Scenario
    x: object
    params: dict
    target: targets.Target
    variant: targets.Variant
    repeat: int
    warmup: int
    timeout_s: float
    process_limit: int
    stopped: str | None = None  # why the remaining repetitions are skipped
    primary: list[float] = field(default_factory=list)  # each ok repetition's judged metric
    extra: int = 0  # repetitions added beyond repeat to reach the run's precision
    min_time_s: float = 0.0  # the timed section's length the warm-up calibrates the work to; 0: as asked
    calibrated: dict = field(default_factory=dict)  # the work parameter as raised by the calibration
    timeout_given: bool = False  # timeout_s is the user's (or the suite's): never raised behind their back
    walls: list[float] = field(default_factory=list)  # each measured repetition's whole time, s

    def seconds_each(self) -> float:
        """What one more repetition is expected to cost: the median of the measured ones."""
        return statistics.median(self.walls) if self.walls else 0.0

    @property
    def run_params(self) -> dict:
        """What the worker runs: the point's parameters with its work as calibrated."""
        return self.params | self.calibrated

    @property
    def label(self) -> str:
        where = f" {self.scenario.sweep}={self.x}" if self.scenario.sweep else ""
        return f"{self.scenario.name}{where} {self.target.label}/{self.variant.name}"


@dataclass
class Plan:
    jobs: list[Job]
    notes: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    # Points a suite skipped because the target cannot hold them: stored as n/a rows, so
    # that they show in the table rather than vanish. (scenario, x, params, target, variant, why)
    skipped_points: list[tuple] = field(default_factory=list)
    precision: float | None = None  # --precision: add repetitions until the 95% CI is this narrow
    max_repeat: int = 30  # ... but never more repetitions than this per point
    remote: str | None = None  # user@host for placement=remote; None: a namespace here
    remote_dir: str | None = None
    netem: str | None = None  # netem options for the namespace's link, e.g. "delay 1ms"
    limits: dict | None = None  # --limits: the machine's limits, measured before the run (msgbench/running/limits.py)
    noise_floor: dict | None = None  # the machine's steadiness, probed before the run (msgbench/running/probe.py)
    inventory: hosts.Inventory | None = None  # from --hosts
    place: dict = field(default_factory=dict)  # --place: role -> [host alias]
    cpu_policy: str = cpus.DEFAULT_RUN_POLICY  # --cpus: where the harness, brokers and workers run
    min_time_s: float = 0.0  # --min-time: each timed section at least this long (calibrate.py); 0: off
    budget_s: float | None = None  # --budget: the run's whole time; extra repetitions only within it
    started: float | None = None  # time.monotonic() when execute began
    metadata: dict = field(default_factory=dict)  # more for the run's metadata (a capacity search's bound)

    def elapsed_s(self) -> float:
        return time.monotonic() - self.started if self.started is not None else 0.0

    def calibrate(self) -> None:
        """Give every job that can be calibrated its min_time_s and the warm-up that sizes it."""
        if self.min_time_s <= 0:
            return
        for job in self.jobs:
            if calibrate.applies(spec.workload(job.scenario.workload), job.scenario.sweep):
                job.min_time_s = self.min_time_s
                job.warmup = max(job.warmup, 1)  # the repetition that calibrates is a warm-up

    def check_placement(self, strict: bool = True) -> None:
        """Remote placement needs root (for a namespace) or a remote host.

        A single run that asks for it without either is refused; a suite drops those
        points, says so, and runs the rest.
        """
        remote = [j for j in self.jobs if j.params.get("placement") == "remote"]
        if remote and not self.remote and not self.inventory and os.geteuid() != 0:
            why = ("placement=remote on one machine needs root to create a network namespace for "
                   "the server: run as root, or give a real host with --remote user@host")
            if strict or len(remote) == len(self.jobs):
                raise PlanError(why)
            self.jobs = [j for j in self.jobs if j not in remote]
            self.skipped.append(f"{len(remote)} points with {why}")
            remote = []
        if self.netem and (self.remote or self.inventory or not remote):
            raise PlanError("--netem shapes the link to a namespace: it needs placement=remote without --remote "
                            "or --hosts")
        if self.place or self.inventory:
            try:
                placement.check_roles(self.place, workload_runs.roles({j.scenario.workload for j in self.jobs}),
                                      self.inventory, workload_runs.spread_roles())
            except placement.PlacementError as exc:
                raise PlanError(str(exc)) from None
            for workload in sorted({j.scenario.workload for j in self.jobs}):
                problem = workload_runs.plugin(workload).check_place(self.jobs, self.place)
                if problem:
                    raise PlanError(problem)
            if remote and self.inventory and "server" not in self.place:
                if len(self.inventory.hosts) != 1:
                    raise PlanError("placement=remote with --hosts: say which host runs the server, e.g. "
                                    f"--place server={next(iter(self.inventory.hosts), 'h1')}")
                self.place["server"] = list(self.inventory.hosts)


def plan_run(
    scenarios: list[Scenario],
    target_names: list[str] | None,
    variant_choice: str | None,
    repeat: int,
    warmup: int,
    timeout_s: float | None,
    strict_targets: bool,
    builds: dict[str, list[targets.Target]] | None = None,
) -> Plan:
    """Resolve and check everything before any worker starts. builds: a target's builds
    (builds.expand), each measured in place of the target, interleaved with the others."""
    plan = Plan(jobs=[])
    for scenario in scenarios:
        wl = spec.workload(scenario.workload)
        chosen = _targets_for(scenario, wl, target_names, strict_targets, plan, builds or {})
        measured = _measured(chosen, wl.name, variant_choice or scenario.variants)  # what reference tools compare with
        for x, given in scenario.points():
            params = _resolve(wl, given)
            for target in chosen:
                kind = workload_runs.server_kind(wl.name, params)
                message = kind and kind.refusal(target)
                if message:
                    if strict_targets and target_names:
                        raise PlanError(message)
                    plan.skipped.append(message)
                    default = target.variants.get(target.default_variant)
                    if default:  # an n/a row, so that the target does not vanish from the table
                        plan.skipped_points.append((scenario, x, params, target, default, message))
                    continue
                pool = kind.variants(target) if kind else None
                for variant in _variants(target, wl.name, variant_choice or scenario.variants, measured, pool):
                    try:
                        plan.jobs.append(_job(scenario, x, params, wl, target, variant,
                                              repeat, warmup, timeout_s))
                    except PlanError as exc:
                        if strict_targets:  # a point the user asked for: refused before anything runs
                            raise
                        plan.skipped.append(str(exc))  # a suite runs the points that fit
                        plan.skipped_points.append((scenario, x, params, target, variant, str(exc)))
        plan.notes += [n for n in scenario.notes if n not in plan.notes]
    if not plan.jobs:
        raise PlanError("nothing to run: " + ("; ".join(plan.skipped) or "no scenario matched"))
    return plan


def _targets_for(scenario, wl, target_names, strict, plan, builds) -> list[targets.Target]:
    names = target_names or scenario.targets
    if names:
        chosen = [targets.target(n) for n in names]
    else:
        chosen = [t for t in targets.registry().values()
                  if wl.name in t.workloads and t.kind != "reference"]
    chosen = [b for t in chosen for b in builds.get(t.name, [t])]
    usable = []
    for t in chosen:
        if wl.name not in t.workloads:
            message = f"target {t.name} does not implement workload {wl.name} (it has: {', '.join(t.workloads)})"
            if strict:
                raise PlanError(message)
            plan.skipped.append(message)
            continue
        try:
            targets.require_installed(t)
            problems = workload_runs.target_problems(t)  # the keys its workloads' plug-ins own
            if problems:
                raise targets.TargetError("; ".join(problems))
        except targets.TargetError as exc:
            if strict and not t.build_of:  # a build that is missing is skipped: the others still run
                raise PlanError(str(exc)) from None
            plan.skipped.append(str(exc))
            continue
        usable.append(t)
    return usable


def _measured(chosen: list[targets.Target], workload: str, choice: str) -> set[str]:
    """The targets a run measures and their variants' names ("c", "c/tuned"): a reference tool
    runs for what it is the yardstick of."""
    found = set()
    for target in chosen:
        if target.kind == "reference":
            continue
        found.add(target.name)
        with contextlib.suppress(PlanError):  # none of the chosen variants: the plan says so where it picks them
            found |= {f"{target.name}/{v.name}" for v in _variants(target, workload, choice, set())}
    return found


def _variants(target: targets.Target, workload: str, choice: str, measured: set[str],
              pool: list[targets.Variant] | None = None) -> list[targets.Variant]:
    """The variants a job runs; pool: the only ones that may (a server kind's)."""
    available = target.variants_for(workload) if pool is None else pool
    if target.kind == "reference":  # each reference tool is a variant; run those that apply
        # reference_for names a target ("redis") or one of its variants ("c/tuned"): run when it is measured
        return [v for v in available if not v.reference_for or measured & set(v.reference_for)]
    return _chosen_variants(target, workload, choice, available)


def _chosen_variants(target: targets.Target, workload: str, choice: str,
                     available: list[targets.Variant]) -> list[targets.Variant]:
    """--variant's items, each "default" (the target's own default), "all", a variant's name
    (for each target that has it), or TARGET:NAME (that target only); a target no item
    applies to runs its default. `--variant default,virtual` is java's threads and virtual
    and every other target's default."""
    names = {v.name: v for v in available}
    default = target.variants.get(target.default_variant)
    default = default if default in available else available[0] if available else None
    items = [v.strip() for v in choice.split(",")]
    own = [item.partition(":")[2] for item in items if item.partition(":")[0] == target.name and ":" in item]
    for name in own:
        if name not in names:
            raise PlanError(f"--variant {target.name}:{name}: target {target.name} has no variant {name!r} for "
                            f"{workload}; its variants are: {', '.join(names)}")
    general = [item for item in items if ":" not in item]
    picked: list[targets.Variant] = []
    for item in general:
        if item == "all":
            picked += available
        elif item == "default" and default:
            picked.append(default)
        elif item in names:
            picked.append(names[item])
    picked += [names[name] for name in own]
    if not picked and not general:  # TARGET:NAME items only, none of them this target's
        picked = [default] if default else []
    if not picked:
        raise PlanError(
            f"target {target.name} has no variant {choice!r} for {workload}; "
            f"its variants are: {', '.join(names)}"
        )
    return list(dict.fromkeys(picked))


def _resolve(wl: spec.Workload, given: dict) -> dict:
    try:
        params = spec.resolve_params(wl, given)
        workload_runs.plugin(wl.name).check(params)
    except spec.ParamError as exc:
        raise PlanError(str(exc)) from None
    return params


def _job(scenario, x, params, wl, target, variant, repeat, warmup, timeout_s) -> Job:
    processes = spec.processes_needed(wl, params)
    allowed = min(target.max_processes, variant.max_processes or target.max_processes)
    if processes > allowed:
        raise PlanError(
            f"{wl.name} with {_shown(params)} needs {processes:,} processes; {target.label}/{variant.name} "
            f"allows at most {allowed:,}"
        )
    need = processes * target.process_bytes(wl.name, variant)
    have = sysinfo.meminfo().get("MemTotal", 0)
    kind = workload_runs.server_kind(wl.name, params)
    if kind:  # the server and the load generator, each with a socket per user
        problem = kind.fit_problem(target, params, have, MEMORY_HEADROOM)
        if problem:
            raise PlanError(problem)
    elif have and need > have * MEMORY_HEADROOM:
        raise PlanError(
            f"{wl.name} with {_shown(params)} on {target.name} needs about {need / 2**30:,.1f} GiB "
            f"({processes:,} processes x {target.process_bytes(wl.name, variant):,} B): it will not fit in this "
            f"machine's {have / 2**30:,.1f} GiB"
        )
    given = scenario.timeout_s or timeout_s  # the user's (or the suite's) own limit
    limit = given or DEFAULT_TIMEOUT_S
    floor = wl.raw.get("time_limit_s")
    if floor:
        needed = float(expr.evaluate(floor, params))
        if given and needed > given:  # a limit the user set is never raised behind their back
            which = f"the scenario's timeout_s = {given:g}" if scenario.timeout_s else f"--timeout {given:g}"
            raise PlanError(f"{wl.name} with {_shown(params)} needs a time limit of at least {math.ceil(needed):,} s "
                            f"({floor}); {which} allows less: give at least that, or shorten the point")
        limit = max(limit, needed)
    return Job(
        scenario=scenario, x=x, params=params, target=target, variant=variant,
        repeat=scenario.repeat or repeat, warmup=scenario.warmup if scenario.warmup is not None else warmup,
        timeout_s=limit, process_limit=process_limit(processes), timeout_given=bool(given),
    )


def drop_target(plan: Plan, label: str, why: str) -> None:
    """Leave out every job of one target or build (one that failed to build), saying why."""
    plan.jobs = [j for j in plan.jobs if j.target.label != label]
    plan.skipped.append(why)
    if not plan.jobs:
        raise PlanError("nothing to run: " + "; ".join(plan.skipped))


def process_limit(processes: int) -> int:
    """The process limit a worker is given (erl +P): room for the run and the runtime's own."""
    return max(1024, int(processes * 1.1) + 1000)


def _shown(params: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in params.items() if isinstance(v, (int, float)))


# ---------------------------------------------------------------- execution


def execute(plan: Plan, store: Store, suite: str | None, command: str | None = None,
            progress: Progress | None = None, drive=None, beside: BuildsBeside | None = None,
            on_scenario=None) -> tuple[str, str]:
    """Run every job; return the run id and its final status.

    drive: instead of the plan's rounds, a function given (measure, run_id) that decides
    the measurements itself (msgbench/running/capacity_run.py), with the run's brokers, peers and
    CPU layout set up as for any run; measure(job, round_index) measures one repetition
    of a job, stores it and returns its Outcome.
    beside: the builds still running; each scenario waits for its targets' (beside.py).
    on_scenario: given (run_id, scenario name) once a scenario's planned repetitions have
    ended, returns text to show (its rows), or ""."""
    chosen = {j.target.label: j.target for j in plan.jobs}
    plan.started = time.monotonic()
    plan.calibrate()
    progress = progress or Progress(total=sum(j.warmup + j.repeat for j in plan.jobs))
    # A second or more each on a loaded machine (a JVM, erl): said, not silent.
    progress.note(f"msgbench: asking {len(chosen)} runtime{'s' if len(chosen) != 1 else ''} for "
                  f"{'their versions' if len(chosen) != 1 else 'its version'}", log=False)
    # A target still building is asked once it is built (a broker client's version is
    # its built binary's).
    unbuilt = {j.target.label for j in plan.jobs if beside and beside.built(j) is None}
    runtimes = {label: targets.runtime_version(t) for label, t in chosen.items() if label not in unbuilt}
    metadata = sysinfo.collect(runtimes)
    built = {label: t.build_of.describe() | {"version": runtimes[label], "folder": str(t.folder)}
             for label, t in chosen.items() if t.build_of}
    if built:
        metadata["builds"] = built
    metadata["harness"] = procs.harness_identity()  # so a later start can tell if this run was abandoned
    command = command or shlex.join(["msgbench", *sys.argv[1:]])
    notes = plan.notes + [f"skipped: {s}" for s in plan.skipped]
    if plan.limits:
        metadata["limits"] = plan.limits
    if plan.noise_floor:
        metadata["noise_floor"] = plan.noise_floor
    if plan.precision is not None:
        metadata["precision"] = {"target": plan.precision, "max_repeat": plan.max_repeat}
    if plan.min_time_s > 0:
        metadata["min_time_s"] = plan.min_time_s
    if plan.budget_s is not None:
        metadata["budget_s"] = plan.budget_s
    metadata |= plan.metadata
    layout = cpus.layout(plan.cpu_policy)
    metadata["cpu_placement"] = layout.as_dict() | {"description": layout.describe()}
    run_id = store.start_run(command, suite, metadata, notes)
    for point in plan.skipped_points:
        _store_skipped(store, run_id, *point)
    status = "complete"
    # What harnesses killed with SIGKILL left in /tmp, which nothing of theirs could remove:
    # every run clears it, whatever it runs itself.
    tempdirs.sweep(services.TEMP_PREFIX)
    hosts.remove_leftover_control_dirs()
    previous_handlers = interrupts.install()
    harness_cpus = os.sched_getaffinity(0)
    try:
        if layout.harness:
            os.sched_setaffinity(0, layout.harness)
        with (placement.Peers(plan.jobs, plan.remote, plan.remote_dir, plan.netem,
                              inventory=plan.inventory, place=plan.place,
                              roles=workload_runs.roles({j.scenario.workload for j in plan.jobs}),
                              server_kind=workload_runs.server_kind, check_hosts=workload_runs.check_hosts) as peers,
              _server_kind_limits(plan.jobs),
              services.Services(keep_log=lambda name, text: store.add_log(run_id, name, text),
                                note=lambda note: store.add_note(run_id, note), placed=peers.service_host,
                                listen_here=peers.service_address,
                                say=progress.note, cpus=layout.brokers) as brokers):
            for note in peers.notes:
                store.add_note(run_id, note)
            if peers.facts:  # each host's CPU, cores, kernel and runtimes, beside this machine's
                store.set_hosts(run_id, peers.facts)
            for kind in workload_runs.server_kinds():
                kind.check_hosts(plan.jobs, peers, MEMORY_HEADROOM)
            if drive is not None:
                drive(lambda job, round_index: _measure(job, round_index, run_id, store, progress, peers,
                                                        brokers, layout), run_id)
                return run_id, status
            pending: dict[str, list[Job]] = {}
            for job in plan.jobs:
                pending.setdefault(job.scenario.name, []).append(job)
            while pending:
                name = beside.next_scenario(pending) if beside else next(iter(pending))
                jobs = pending.pop(name)
                if beside:
                    _add_metadata(beside.quiet_check(), run_id, store)
                    jobs = _built_only(jobs, beside, run_id, store, progress)
                    _ask_versions(jobs, unbuilt, runtimes, run_id, store)
                rounds = max((j.warmup + j.repeat for j in jobs), default=0)
                for round_index in range(rounds):
                    for job in jobs:
                        if round_index < job.warmup + job.repeat and not job.stopped:
                            _measure(job, round_index, run_id, store, progress, peers, brokers, layout, beside)
                        elif round_index < job.warmup + job.repeat:
                            progress.skip()
                if on_scenario is not None and jobs:
                    shown = on_scenario(run_id, name)
                    if shown:
                        progress.note(shown)
            if beside:
                beside.builder.join()  # a load generator no scenario waited for
                _add_metadata(beside.quiet_check(), run_id, store)
            _until_precise(plan, run_id, store, progress, peers, brokers, layout)
    except KeyboardInterrupt:
        status = "interrupted"
    except (placement.PlacementError, hosts.HostError, *workload_runs.errors()) as exc:
        store.add_note(run_id, f"failed: {exc}")
        status = "failed"
        raise PlanError(str(exc)) from None
    finally:
        # Still under our handlers: a Ctrl-C now waits until the run's status is stored.
        with interrupts.deferred():
            os.sched_setaffinity(0, harness_cpus)
            progress.close()
            store.finish_run(run_id, status)
            interrupts.restore(previous_handlers)
    return run_id, status


def _built_only(jobs: list[Job], beside: BuildsBeside, run_id: str, store: Store,
                progress: Progress) -> list[Job]:
    """The jobs whose builds succeeded; the others' points stored as failed, with the
    build's error, and taken out of the plan (the extra repetitions never pick them)."""
    kept = []
    for job in jobs:
        error = beside.built(job)
        if not error:
            kept.append(job)
            continue
        job.stopped = "build"
        why = f"not measured: {error.splitlines()[0]}"  # the build's command, exit code and log file
        _store_skipped(store, run_id, job.scenario, job.x, job.params, job.target, job.variant, why,
                       status="failed")
        for _ in range(job.warmup + job.repeat):
            progress.skip()
        progress.note(f"msgbench: {job.label}: {why}")
    return kept


def _add_metadata(found: dict, run_id: str, store: Store) -> None:
    for key, value in found.items():
        store.set_metadata(run_id, key, value)


def _ask_versions(jobs: list[Job], unbuilt: set[str], runtimes: dict, run_id: str, store: Store) -> None:
    """The runtimes' versions of targets built since the run began, into its metadata."""
    asked = {j.target.label: j.target for j in jobs if j.target.label in unbuilt}
    if not asked:
        return
    for label, t in asked.items():
        runtimes[label] = targets.runtime_version(t)
        unbuilt.discard(label)
    store.set_metadata(run_id, "runtimes", runtimes, "the runtimes' versions")


def _until_precise(plan: Plan, run_id: str, store: Store, progress: Progress,
                   peers: placement.Peers, brokers: services.Services, layout: cpus.Layout) -> None:
    """More repetitions, still interleaved, for the points whose primary metric is not yet
    known to plan.precision (95% CI of the mean), up to plan.max_repeat each; within
    plan.budget_s of the run, the widest intervals first.

    Points are taken a whole group at a time (one x of one scenario: every target compared
    there that can still take a repetition, precise or not), so that the targets of a
    comparison keep equal, interleaved samples; with a budget, the group of the widest
    interval that fits in what is left, and none when no group fits."""
    if plan.precision is None:
        return
    while True:
        groups = _groups_wanting(plan)
        if not groups:
            return
        if plan.budget_s is None:
            chosen = [j for group in groups for j in group]
        else:
            fitting = [g for g in groups if plan.elapsed_s() + sum(j.seconds_each() for j in g) <= plan.budget_s]
            if not fitting:
                return
            chosen = max(fitting, key=lambda g: max(stats.relative_precision(j.primary) for j in g))
        progress.total += len(chosen)
        for job in chosen:
            job.extra += 1
            _measure(job, job.warmup + job.repeat + job.extra - 1, run_id, store, progress, peers, brokers, layout)


def _groups_wanting(plan: Plan) -> list[list[Job]]:
    """The groups (one scenario's x) where a point's interval is still wider than
    plan.precision: each with all of its jobs that can take one more repetition, in the
    plan's (interleaved) order."""
    def key(j: Job) -> tuple:
        return j.scenario.name, points.canonical(j.x)

    def can_take_more(j: Job) -> bool:
        return not j.stopped and j.repeat + j.extra < plan.max_repeat

    imprecise = {key(j) for j in plan.jobs
                 if can_take_more(j) and stats.relative_precision(j.primary) > plan.precision}
    groups: dict[tuple, list[Job]] = {}
    for j in plan.jobs:
        if key(j) in imprecise and can_take_more(j):
            groups.setdefault(key(j), []).append(j)
    return list(groups.values())


def _measure(job: Job, round_index: int, run_id: str, store: Store, progress: Progress,
             peers: placement.Peers, brokers: services.Services, layout: cpus.Layout,
             beside: BuildsBeside | None = None) -> Outcome:
    warmup = round_index < job.warmup
    repetition = round_index + 1 if warmup else round_index - job.warmup + 1
    planned = job.repeat + job.extra
    progress.start(job.label + (" warm-up" if warmup else f" rep {repetition}/{planned}"))
    started_at, began = now_iso(), time.monotonic()
    wl = spec.workload(job.scenario.workload)

    needs = job.target.services_for(job.variant)

    def run_once(params: dict) -> Outcome:
        service_env = brokers.env_for(needs)
        broker_cpu_before = brokers.cpu_ms(needs)
        machine_before, harness_before = sysinfo.machine_busy_s(), _harness_cpu_s()
        others_before = noise.snapshot()
        argv, cwd, env = _worker_command(job, params)
        env = env | service_env
        request = job.target.request(wl.name, job.variant, params, repetition, warmup)
        kind = workload_runs.server_kind(wl.name, params)
        if kind and peers.server_kind_placed(job, params):  # the server and load generators where --place puts them
            outcome = kind.measure_placed(job, params, peers, request, job.timeout_s)
        else:
            env |= peers.env_for(job.target, job.variant, params, job.process_limit, wl.name,
                                 hosts.local_env_diff(env))
            outcome = run_worker(
                peers.worker(job, argv, env), cwd=cwd, env=env, request=request,
                target=job.target.name, time_limit_s=job.timeout_s, on_progress=progress.worker_progress,
                cpus=layout.measured, gone=(lambda: brokers.died(needs)) if needs else None,
            )
        outcome.other_cpu_share = _other_cpu_share(
            outcome, machine_before, harness_before,
            None if broker_cpu_before is None or not brokers.here(needs)
            else (brokers.cpu_ms(needs) - broker_cpu_before) / 1000)
        outcome.other_work = noise.other_work(others_before, noise.snapshot(), {os.getpid()},
                                              {outcome.pgid} | brokers.local_sessions())
        peers.adopt_remote_usage(job, outcome)
        died = brokers.died(needs)
        if died:
            outcome.status, outcome.error = "failed", died
        derive(wl, params, job.variant, outcome)
        if outcome.status == "ok" and broker_cpu_before is not None:
            # Over the whole worker, unless the worker measured it over the run it reports
            # (a reference tool calibrated by runs that it then discards).
            outcome.metrics.setdefault("broker_cpu_ms", round(brokers.cpu_ms(needs) - broker_cpu_before, 3))
        _verify(wl, params, outcome)
        return outcome

    building = beside.under_way() if beside else []
    if beside:
        beside.measuring(True)
    try:
        outcome = workload_runs.plugin(wl.name).measure(job.run_params, run_once)
    except services.ServiceError as exc:
        outcome = Outcome(status="failed", error=str(exc))
        job.stopped = "service"
    except KeyboardInterrupt:
        outcome = Outcome(status="interrupted", error="interrupted by the user (Ctrl-C or SIGTERM)")
        _store(store, run_id, job, repetition, warmup, outcome, started_at)
        progress.done(outcome.status)
        raise
    finally:
        if beside:
            beside.measuring(False)
    if beside:  # the builds under way as it began or as it ended
        outcome.beside_builds = sorted(set(building) | set(beside.under_way())) or None
    if job.calibrated:
        outcome.calibrated = dict(job.calibrated)
        outcome.metrics = calibrate.as_asked(wl, outcome.metrics, job.params, job.run_params)
    _store(store, run_id, job, repetition, warmup, outcome, started_at)
    progress.done(outcome.status, outcome.error)
    if warmup and round_index == job.warmup - 1:
        _calibrate(job, wl, outcome)
    if not warmup:
        job.walls.append(time.monotonic() - began)  # the repetition's whole cost, harness included
    judged = wl.judged_metric(job.params)  # as results.py judges it
    if not warmup and outcome.status == "ok" and judged in outcome.metrics:
        job.primary.append(outcome.metrics[judged])
    if outcome.status in ("unsupported", "timeout"):
        job.stopped = outcome.status
    return outcome


def _calibrate(job: Job, wl: spec.Workload, outcome: Outcome) -> None:
    """After the last warm-up: raise the point's work so its timed section lasts min_time_s."""
    timed = (outcome.measured or {}).get(wl.timed) if outcome.status == "ok" else None
    if not job.min_time_s or not isinstance(timed, (int, float)):
        return
    by = calibrate.factor(timed, job.min_time_s)
    floor = wl.raw.get("time_limit_s")  # the spec's time limit grows with the work
    while by > 1:
        raised = calibrate.scaled(wl, job.run_params, by)
        needed = float(expr.evaluate(floor, job.run_params | raised)) if floor else 0.0
        if not job.timeout_given or needed <= job.timeout_s:  # a limit the user set is not raised: less work
            break
        by //= 2
    else:
        return
    if not raised:
        return
    job.calibrated |= raised
    job.timeout_s = max(job.timeout_s, needed)


@contextlib.contextmanager
def _server_kind_limits(jobs: list[Job]):
    """What the server kinds' workers need (descriptors), raised for the run and put back."""
    with contextlib.ExitStack() as stack:
        for kind in workload_runs.server_kinds():
            stack.enter_context(kind.limits(jobs))
        yield


def _worker_command(job: Job, params: dict) -> tuple[list[str], object, dict]:
    """The worker's argv, folder and environment: the target's, or for a server kind the
    load generator's."""
    kind = workload_runs.server_kind(job.scenario.workload, params)
    if kind:
        return kind.worker_command(job)
    return job.target.argv(job.variant, job.process_limit), job.target.folder, job.target.worker_env(job.variant)


def _harness_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _other_cpu_share(outcome: Outcome, machine_before: float | None, harness_before: float,
                     broker_s: float | None) -> float | None:
    """The share of the machine's CPU that work other than the measurement took while the
    worker ran: all cores' busy time, less the worker's (its peer and helpers included),
    the harness's and the broker's. Where a measurement competed with something else
    running, its figures say less (results.py warns)."""
    machine_after = sysinfo.machine_busy_s()
    if machine_before is None or machine_after is None or outcome.cpu_s is None or outcome.wall_s <= 0:
        return None
    others = (machine_after - machine_before) - outcome.cpu_s - (_harness_cpu_s() - harness_before) - (broker_s or 0)
    return max(0.0, others) / (outcome.wall_s * (os.cpu_count() or 1))


def derive(wl: spec.Workload, params: dict, variant: targets.Variant, outcome: Outcome) -> None:
    """The metrics of a result, from the raw facts the worker measured (spec formulas)."""
    if outcome.status != "ok" or outcome.measured is None:
        return
    outcome.verify |= workload_runs.plugin(wl.name).variant_facts(variant)
    problems = spec.measured_problems(wl, outcome.measured, outcome.histograms, params)
    try:
        outcome.metrics = {} if problems else spec.derive_metrics(
            wl, params, outcome.measured, outcome.verify, outcome.histograms)
    except spec.DeriveError as exc:
        problems = [str(exc)]
    if problems:
        outcome.status = "error"
        outcome.error = "the worker's result does not fit the spec: " + "; ".join(problems)


def _verify(wl: spec.Workload, params: dict, outcome: Outcome) -> None:
    if outcome.status != "ok":
        return
    problems = [f"metric {m} missing" for m in spec.missing_metrics(wl, outcome.metrics, params)]
    problems += spec.failed_rules(wl, params, outcome.verify, outcome.histograms)
    if problems:
        outcome.status = "failed"
        outcome.error = "verification failed: " + "; ".join(problems)


def _store_skipped(store, run_id, scenario, x, params, target, variant, why: str,
                   status: str = "unsupported") -> None:
    """A point the plan skipped, as one n/a measurement (status unsupported, the reason
    its error), or one that could not run (status failed: its target's build failed)."""
    store.add_measurement(run_id, {
        "scenario": scenario.name, "workload": scenario.workload, "target": target.name,
        "build": target.build_label, "variant": variant.name, "variant_label": variant.label,
        "params": params, "sweep": scenario.sweep, "x": x, "repetition": 1, "warmup": False,
        "status": status, "error": why, "metrics": {}, "verify": {}, "runtime_version": None,
        "started_at": now_iso(), "worker": None, "stderr_tail": "", "extra": variant.settings(),
    })


def _store(store, run_id, job: Job, repetition, warmup, outcome: Outcome, started_at) -> None:
    store.add_measurement(run_id, {
        "scenario": job.scenario.name, "workload": job.scenario.workload, "target": job.target.name,
        "build": job.target.build_label, "variant": job.variant.name, "variant_label": job.variant.label,
        "params": job.params,
        "sweep": job.scenario.sweep, "x": job.x, "repetition": repetition, "warmup": warmup,
        "status": outcome.status, "error": outcome.error, "metrics": outcome.metrics,
        "verify": outcome.verify,
        "runtime_version": (outcome.hello or {}).get("runtime_version"),
        "started_at": started_at, "worker": outcome.worker_info(),
        "stderr_tail": outcome.stderr_tail, "extra": job.variant.settings(), "series": outcome.series,
    })
