"""`msgbench capacity`: the search of msgbench/running/capacity.py run on real systems.

Each step is an ordinary measurement of the workload at one load (the scenario
"<workload> capacity", swept over the load), made by the runner and stored as it
ends, so that show, compare, history and check read the steps as any run's points.
The targets' searches advance together, one step each in turn (interleaved, as a
run's targets are). The bound, the axis and each target's result go in the run's
metadata ("capacity"), written after every step, so that an interrupted search
keeps what it had found.
"""

import contextlib
import dataclasses
from dataclasses import dataclass

from msgbench.core import histogram, spec
from msgbench.data.store import Store
from msgbench.running import capacity, runner
from msgbench.running import workloads as workload_runs
from msgbench.running.capacity_axis import Axis, AxisError
from msgbench.running.progress import Progress
from msgbench.running.suites import Scenario


def axis_for(workload: str, load: str | None) -> Axis:
    """The axis of a workload by its --load name (default: its plug-in's first)."""
    plugin = workload_runs.plugin(workload)
    axes = {axis.name: axis for axis in plugin.capacity_axes}
    if not axes:
        searched = ", ".join(sorted(p.name for p in workload_runs.PLUGINS.values() if p.capacity_axes))
        raise AxisError(f"workload {workload!r} has no capacity search; it has: {searched}")
    if load is None:
        return next(iter(axes.values()))
    if load not in axes:
        raise AxisError(f"--load {load!r}: {workload}'s capacity is searched over {' or '.join(axes)}")
    return axes[load]


def base_params(axis: Axis, given: dict) -> dict:
    """The fixed parameters: the given ones over the axis's defaults, resolved by the spec
    (the axis's own parameter is set at each step)."""
    return spec.resolve_params(spec.workload(axis.workload), axis.checked(axis.defaults() | given))


# ---------------------------------------------------------------- the observations


def observation(axis: Axis, m: dict) -> capacity.Observation:
    """A stored measurement (or an outcome in the same shape) as the judgement reads it."""
    params, metrics = m.get("params") or {}, m.get("metrics") or {}
    worker = m.get("worker") or {}
    try:  # an imported document's histogram is checked here, as the spec checks a worker's
        latency = histogram.counts((worker.get("histograms") or {}).get(axis.latency) or [], axis.latency)
    except histogram.HistogramError:
        latency = {}
    maximum = (worker.get("measured") or {}).get(axis.latency_max)
    return capacity.Observation(
        offered=axis.load_of(params), status=m.get("status", "failed"),
        achieved=_number(axis.achieved(metrics, params)), latency=latency, latency_max_ns=_number(maximum),
        loss_ratio=_number(metrics.get("loss_ratio")) or 0.0, error=m.get("error"))


def _number(value) -> float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def system_label(m: dict) -> str:
    build = f"@{m['build']}" if m.get("build") else ""
    return f"{m['target']}{build}/{m['variant']}"


def by_system(axis: Axis, measurements: list[dict]) -> dict[str, dict[float, list[capacity.Observation]]]:
    """A capacity run's measured steps, per system, per load (warm-ups left out)."""
    found: dict[str, dict[float, list]] = {}
    for m in measurements:
        if m.get("warmup") or m.get("workload") != axis.workload:
            continue
        o = observation(axis, m)
        found.setdefault(system_label(m), {}).setdefault(o.offered, []).append(o)
    return found


def axis_of_run(metadata: dict) -> tuple[Axis, capacity.Slo] | None:
    """A capacity run's axis and bound, from its metadata; None for any other run."""
    raw = (metadata or {}).get("capacity")
    if not isinstance(raw, dict):
        return None
    try:  # an imported run's metadata is no one's promise: a malformed search is no search
        return axis_for(raw["workload"], raw["load"]), capacity.Slo.from_dict(raw["slo"])
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


# ---------------------------------------------------------------- the run


@dataclass
class Settings:
    slo: capacity.Slo
    axis: Axis
    base: dict
    start: float | None = None
    precision: float = capacity.DEFAULT_PRECISION
    confirm: int = capacity.DEFAULT_CONFIRM
    max_steps: int = capacity.DEFAULT_MAX_STEPS
    warmup: int = 0
    timeout_s: float | None = None


def plan(settings: Settings, target_names: list[str] | None, variant: str | None) -> tuple[runner.Plan, Scenario]:
    """The run's plan: one job per system at the first load (the runner's checks apply)."""
    axis, base = settings.axis, settings.base
    start = settings.start or axis.default_start(base)
    scenario = Scenario(name=f"{axis.workload} capacity", workload=axis.workload, params=base, sweep=axis.name,
                        values=(start,))
    first = axis.quantize(base)(start)
    at_start = dataclasses.replace(scenario, params=axis.params_for(first, base), sweep=None, values=())
    found = runner.plan_run([at_start], target_names, variant, 1, settings.warmup, settings.timeout_s,
                            strict_targets=bool(target_names))
    for job in found.jobs:
        job.scenario, job.x = scenario, first
    found.metadata["capacity"] = {
        "workload": axis.workload, "load": axis.name, "unit": axis.unit, "slo": settings.slo.as_dict(),
        "precision": settings.precision, "confirm": settings.confirm, "start": first, "base": base,
        "results": {},
    }
    return found, scenario


def run(settings: Settings, the_plan: runner.Plan, scenario: Scenario, store: Store,
        progress: Progress | None = None) -> tuple[str, str, dict]:
    """Search every system of the plan; the run id, its status and each system's result."""
    axis, base, slo = settings.axis, settings.base, settings.slo
    quantize = axis.quantize(base)
    systems = {}
    for job in the_plan.jobs:
        limit, why = axis.machine_limit(base, job.target, runner.MEMORY_HEADROOM)
        search = capacity.Search(start=job.x, precision=settings.precision, limit=limit, confirm=settings.confirm,
                                 max_steps=settings.max_steps, quantize=quantize, limit_why=why or "")
        systems[f"{job.target.label}/{job.variant.name}"] = (job, search)
    results: dict[str, dict] = {}
    progress = progress or Progress(total=len(systems) * 12)

    def drive(measure, run_id: str) -> None:
        def keep(label: str, search: capacity.Search) -> None:
            """The system's result into the run's metadata, as soon as it changes."""
            if search.status in (capacity.NEVER, capacity.STEP_LIMIT) and search.capacity is None and seen[label] \
                    and not any(o.status == "ok" for runs in seen[label].values() for o in runs):
                # No load was measured, so none was "not held": say what broke, not "never".
                search.stop(capacity.FAILED, f"every step failed, the last with {last[label]}")
            if results.get(label) != result_of(search):
                results[label] = result_of(search)
                store.set_metadata(run_id, "capacity", the_plan.metadata["capacity"] | {"results": results},
                                   "the capacity search's results")

        jobs: dict[tuple[str, float], runner.Job] = {}
        seen: dict[str, dict[float, list]] = {label: {} for label in systems}
        last: dict[str, str] = {}  # each system's latest verdict, why
        while any(not search.done for _, search in systems.values()):
            for label, (first, search) in systems.items():
                probe = search.next()
                if probe is None:  # done now (the step limit) or before
                    keep(label, search)
                    continue
                if (label, probe.load) not in jobs:
                    jobs[(label, probe.load)] = _job_at(first, scenario, axis, base, probe.load, settings)
                job = jobs[(label, probe.load)]
                done_here = len(seen[label].get(probe.load, []))
                if progress.count >= progress.total:
                    progress.total += 1 + (job.warmup if not done_here else 0)
                if not done_here:
                    for warm in range(job.warmup):
                        _measured(job, measure, warm)
                job.extra = done_here  # a confirming run shows as repetition 2/2, 3/3
                outcome = _measured(job, measure, job.warmup + done_here)
                stored = {"params": job.params, "status": outcome.status, "error": outcome.error,
                          "metrics": outcome.metrics, "worker": outcome.worker_info()}
                seen[label].setdefault(probe.load, []).append(observation(axis, stored))
                if outcome.status == "unsupported":
                    search.stop(capacity.UNSUPPORTED, outcome.error or "unsupported")
                else:
                    verdict = capacity.judge(slo, seen[label][probe.load])
                    search.record(probe.load, verdict.held)
                    progress.note(f"capacity {label} at {probe.load:,.6g} {axis.unit}: "
                                  f"{'held' if verdict.held else 'not held'} ({verdict.why})")
                    last[label] = verdict.why
                keep(label, search)


    run_id, status = runner.execute(the_plan, store, None, progress=progress, drive=drive)
    return run_id, status, results


def _job_at(first: runner.Job, scenario: Scenario, axis: Axis, base: dict, load: float,
            settings: Settings) -> runner.Job:
    params = spec.resolve_params(spec.workload(axis.workload), axis.params_for(load, base))
    job = runner._job(dataclasses.replace(scenario, params=params), load, params, spec.workload(axis.workload),
                      first.target, first.variant, 1, settings.warmup, settings.timeout_s)
    job.scenario = scenario
    return job


def _measured(job: runner.Job, measure, round_index: int):
    """One repetition, with what a server kind's workers need raised (the descriptors
    for its users)."""
    kind = workload_runs.server_kind(job.scenario.workload, job.params)
    with kind.limits([job]) if kind else contextlib.nullcontext():
        return measure(job, round_index)


def result_of(search: capacity.Search) -> dict:
    return {"status": search.status or "searching", "capacity": search.capacity, "why": search.why,
            "steps": search.steps,
            "runs_at_capacity": search.runs.get(search.capacity, 0) if search.capacity is not None else 0}
