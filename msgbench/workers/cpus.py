"""Where a run's processes execute: the CPU placement policy, applied and read back.

On a small shared machine the largest source of run-to-run difference is not the code
measured but where the scheduler puts it: a message handed to a thread on another CPU
wakes that CPU (on a VM whose idle vCPUs halt, through the hypervisor), threads migrate,
and the harness, a broker or anything else lands beside the measurement. A policy fixes
where each role runs:

- `pinned`: the harness, the brokers and the machine's other work keep the first CPU the
  harness may use; the measured processes (the worker and everything it starts: its
  peer, a tool's server half) get the rest. On a 2-CPU machine that is one CPU for the
  measurement, so every runtime runs on one core (it sees one CPU in its affinity mask and
  sizes its schedulers to it). With 4 or more CPUs, brokers get a third of the rest to
  themselves. It is the suites' default: it reproduces best (docs/methodology.md).
- `unpinned`: nothing is set; the scheduler places everything, as a plain command would.

Each worker's placement is applied by its supervisor before the worker starts (so its
threads and children inherit it), read back from /proc while it runs and stored with the
measurement; a process seen outside its CPUs makes the measurement say so.
"""

import os
from dataclasses import dataclass

from msgbench.workers import shield
from msgbench.workers.cpulist import cpu_list, parse_cpu_list

PINNED, UNPINNED = "pinned", "unpinned"
POLICIES = {
    PINNED: "the harness and brokers on the first CPU, the measured processes on the others "
            "(on a 2-CPU machine: one CPU each)",
    UNPINNED: "nothing pinned: the scheduler places every process",
}
DEFAULT_RUN_POLICY = PINNED


class CpuError(ValueError):
    pass


def check_policy(name: str) -> str:
    if name not in POLICIES:
        raise CpuError(f"--cpus {name!r} is not a placement policy; choose one of: "
                       + "; ".join(f"{k} ({v})" for k, v in POLICIES.items()))
    return name


@dataclass(frozen=True)
class Layout:
    """The CPUs of each role; None: left to the scheduler."""

    policy: str
    harness: frozenset[int] | None = None
    measured: frozenset[int] | None = None
    brokers: frozenset[int] | None = None
    shielded: bool = False  # the measured CPUs kept from the rest of the machine (msgbench tune)

    @property
    def cores(self) -> int | None:
        """How many CPUs the measured processes are given (their runtimes are told so)."""
        return len(self.measured) if self.measured else None

    def as_dict(self) -> dict:
        found = {"policy": self.policy}
        for role in ("harness", "measured", "brokers"):
            cpus = getattr(self, role)
            if cpus is not None:
                found[role] = cpu_list(cpus)
        if self.shielded:
            found["shielded"] = True
        return found

    def describe(self) -> str:
        if self.measured is None:
            return f"{self.policy}: every process placed by the scheduler"
        noun = "CPU" if len(self.measured) == 1 else "CPUs"
        text = f"{self.policy}: measured processes on {noun} {cpu_list(self.measured)}"
        if self.shielded:
            text += " (shielded: the machine's other work kept off it)"
        if self.brokers == self.harness:
            return text + f", harness and brokers on {cpu_list(self.harness)}"
        return text + f", brokers on {cpu_list(self.brokers)}, harness on {cpu_list(self.harness)}"


def layout(policy: str, available: frozenset[int] | None = None) -> Layout:
    """The layout of a policy over the CPUs this process may use; with a shield up
    (msgbench/workers/shield.py, made by msgbench tune), pinned is the shield's own split."""
    check_policy(policy)
    up = shield.active() if available is None else None
    if up is not None and policy == PINNED:
        return Layout(policy=policy, harness=up.rest, brokers=up.rest, measured=up.measured, shielded=True)
    if up is not None:
        available = up.rest | up.measured
    cpus = sorted(available if available is not None else os.sched_getaffinity(0))
    if policy == UNPINNED or len(cpus) < 2:
        # One CPU cannot be split: everything shares it, as unpinned would.
        return Layout(policy=UNPINNED if policy == UNPINNED else f"{policy} (one CPU: nothing to split)")
    harness = frozenset(cpus[:1])
    rest = cpus[1:]
    if len(rest) >= 3:  # room for brokers of their own: a third of the rest, at least one
        share = max(1, len(rest) // 3)
        return Layout(policy=policy, harness=harness, brokers=frozenset(rest[:share]),
                      measured=frozenset(rest[share:]))
    return Layout(policy=policy, harness=harness, brokers=harness, measured=frozenset(rest))


def allowed(pid: int) -> frozenset[int] | None:
    """The CPUs a process may run on (Cpus_allowed_list); None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("Cpus_allowed_list:"):
                    return parse_cpu_list(line.split(":", 1)[1])
    except OSError:
        return None
    return None


def session_placement(sid: int) -> dict[str, str]:
    """Each live process of a session (a worker's supervisor leads one), by command name
    and pid, with the CPUs it may run on: what the kernel says, not what was asked."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        name, fields = stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()
        if int(fields[3]) != sid:  # field 6, the session id
            continue
        cpus = allowed(int(entry))
        if cpus is not None:
            found[f"{name}[{entry}]"] = cpu_list(cpus)
    return found


def escaped(seen: dict[str, str], wanted: frozenset[int] | None) -> list[str]:
    """The processes seen running outside the CPUs they were given."""
    if wanted is None:
        return []
    return [f"{proc} on CPUs {cpus}" for proc, cpus in seen.items() if not parse_cpu_list(cpus) <= wanted]
