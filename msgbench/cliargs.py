"""What every command reads alike: exit codes, the one-line usage error, the store, NAME=VALUE
arguments, a workload's parameter values, lists of names and percentages. Shared by cli and
capacity_cli, below both, so that neither reaches into the other."""

import argparse
import contextlib
import math
import sqlite3

from msgbench.core import spec
from msgbench.core.paths import default_store_path
from msgbench.data.store import Store
from msgbench.hosts import inventory, placement
from msgbench.running import workloads as workload_runs
from msgbench.workers import cpus, procs


def place(plan, args) -> None:
    """--cpus, --hosts and --place onto a plan (run's and capacity's alike), each refusal one line."""
    try:
        plan.cpu_policy = cpus.check_policy(args.cpus)
    except cpus.CpuError as exc:
        raise UsageError(str(exc)) from None
    if args.place and not args.hosts:
        raise UsageError(f"--place {args.place} names hosts: give the inventory with --hosts FILE")
    try:
        plan.inventory = inventory.load_inventory(args.hosts) if args.hosts else None
        plan.place = placement.parse_place(args.place) if args.place else {}
    except (inventory.HostError, placement.PlacementError) as exc:
        raise UsageError(str(exc)) from None


EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(ValueError):
    pass


def open_store(args) -> Store:
    store = Store(args.store or default_store_path())
    # Runs whose harness died (even by SIGKILL). A store that cannot be written now
    # (read-only, locked) is still read; the next start marks them.
    with contextlib.suppress(sqlite3.OperationalError):
        store.mark_abandoned(procs.harness_alive)
    return store


def parse_assignment(text: str, what: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name:
        raise UsageError(f"{what} {text!r} must look like NAME=VALUE")
    return name.strip(), value.strip()


def param_value(wl: spec.Workload, name: str, text: str):
    """A -p NAME=TEXT value as the workload takes it, or a ParamError naming the parameter."""
    if name not in wl.params:
        raise spec.ParamError(
            f"unknown parameter {name!r} for workload {wl.name}; its parameters are: {', '.join(wl.params)}"
        )
    special = workload_runs.plugin(wl.name).parse_value(name, text)
    return special if special is not None else spec.coerce(name, wl.params[name], text)


def names(text: str | None, option: str) -> list[str] | None:
    """A comma-separated list of names, each at most once (a name twice would measure it twice)."""
    if not text:
        return None
    names = [n.strip() for n in text.split(",")]
    if "" in names:
        raise UsageError(f"{option} {text!r} has an empty name; give names separated by commas")
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"{option} {text!r} names {', '.join(twice)} more than once; name each once")
    return names


def percent(text: str) -> float:
    """--max-slowdown: 5% or 5 (percent), 0 to 1000."""
    try:
        value = float(text.strip().removesuffix("%"))
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or not 0 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage from 0 to 1000 (e.g. 5%)")
    return value / 100
