"""The noise floor: how steady this machine is right now, measured before every run.

targets/c's msgbench-limits (the program behind `msgbench limits`) runs its pipe
ping-pong, two threads placed as the run places its workers (msgbench/workers/cpus.py), over about a second
in slices; the coefficient of variation of the slices' rates is the run's noise floor,
stored in its metadata as "noise_floor" and shown beside its results. A workload measured
on a machine whose own floor is at 9% cannot be expected to hold still within 3%.
"""

import functools
import json
import shlex
import statistics
import subprocess

from msgbench.data.store import now_iso
from msgbench.workers import shield, targets
from msgbench.workers.cpus import cpu_list

SECONDS, SLICES = 1.1, 11  # the first slice is a warm-up (threads, pipes, caches): dropped
TIME_LIMIT_S = 10.0
# Under QUIET_CV the floor is below the 3% a steady point aims for (docs/methodology.md);
# over NOISY_CV the machine alone spreads a repetition's figures more than the 5% two
# runs' medians should agree within. docs/decisions.md.
QUIET_CV, NOISY_CV = 0.02, 0.05


def binary():
    return targets.target("c").folder / "bin" / "msgbench-limits"


def measure(cpus: frozenset[int] | None = None) -> dict:
    """{"rate_per_s", "cv", "slices", "seconds", "command", "measured_at"}, or
    {"skipped": why} where it cannot run (the program not built, not Linux...).
    cpus: where the run's measured processes will run (msgbench/workers/cpus.py): the probe runs
    there too, so its floor is the one the measurements stand on."""
    try:
        path = binary()
    except targets.TargetError as exc:
        return {"skipped": f"no C target to run it ({exc})"}
    if not path.exists():
        return {"skipped": f"{path} is not built (make build)"}
    argv = [str(path), "--probe", f"{SECONDS:g}", str(SLICES)]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=TIME_LIMIT_S, check=False,
                              preexec_fn=functools.partial(shield.place, cpus, shield.path_for(cpus)))
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"skipped": f"{shlex.join(argv)}: {exc}"}
    if proc.returncode != 0:
        return {"skipped": f"{shlex.join(argv)} failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}"}
    try:
        data = json.loads(proc.stdout)
        rates = [n / s for n, s in zip(data["probe_round_trips"], data["probe_seconds"], strict=True)][1:]
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        return {"skipped": f"{shlex.join(argv)} printed {proc.stdout[:80]!r}: {exc}"}
    mean = statistics.fmean(rates)
    return {"rate_per_s": round(statistics.median(rates)), "cv": round(statistics.stdev(rates) / mean, 4),
            "slices": len(rates), "seconds": round(sum(data["probe_seconds"][1:]), 3),
            "command": "targets/c/bin/msgbench-limits " + shlex.join(argv[1:]), "measured_at": now_iso(),
            "cpus": cpu_list(cpus) if cpus else "any"}


def line(floor: dict | None) -> str | None:
    """"noise floor: pipe ping-pong cv 0.8% (quiet)", for the summary and the report; None
    for a run stored before the probe, or run with --no-probe."""
    if not floor:
        return None
    if "skipped" in floor:
        return f"noise floor: not measured ({floor['skipped']})"
    cv = floor["cv"]
    verdict = ("quiet" if cv < QUIET_CV else "some noise: expect intervals of a few %" if cv < NOISY_CV
               else "noisy: expect wide intervals")
    where = f" on CPU {floor['cpus']}" if floor.get("cpus") not in (None, "any") else ""
    return f"noise floor: pipe ping-pong{where} cv {cv:.1%} over {floor['slices']} slices ({verdict})"


# Two runs whose floors differ by more than this were measured on a machine of another
# speed (a busier host, other tenants): their figures' differences of that order may be
# the machine's. The floor's median over 10 slices moves ~2% between quiet runs.
DRIFT = 0.05


def drift_line(a: dict | None, b: dict | None, a_name: str = "A", b_name: str = "B") -> str | None:
    """What the two runs' noise floors say of the machine between them, when it changed:
    "the machine: its noise-floor probe ran 18% slower in B (412k vs 338k round trips/s on
    CPU 1): differences of that size may be the machine's, not the code's"; None when they
    agree, were placed apart, or either was not measured."""
    if not a or not b or "rate_per_s" not in a or "rate_per_s" not in b or a.get("cpus") != b.get("cpus"):
        return None
    ratio = b["rate_per_s"] / a["rate_per_s"] if a["rate_per_s"] else 1.0
    if abs(ratio - 1) <= DRIFT:
        return None
    word = "slower" if ratio < 1 else "faster"
    where = f" on CPU {a['cpus']}" if a.get("cpus") not in (None, "any") else ""
    return (f"the machine: its noise-floor probe ran {abs(1 - ratio):.0%} {word} in {b_name} "
            f"({a['rate_per_s']:,} vs {b['rate_per_s']:,} round trips/s{where}): differences of that size may "
            "be the machine's, not the code's")
