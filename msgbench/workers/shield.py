"""A shield for the measured CPUs: the rest of the machine's processes moved off them.

`--cpus pinned` keeps msgbench's own processes apart (msgbench/workers/cpus.py), but anything else on
the machine (a build, an editor's indexer, a second user's job) may still be scheduled on the
measured CPU beside the worker: on a 2-CPU machine one busy process there halves a figure.
Pinning cannot stop that; the kernel's cpusets can. `msgbench tune` creates two cpusets, as
`cset shield` does:

- `msgbench-rest`: the harness's CPUs. Every task of the machine is moved into it, so it and
  everything it forks later run there only.
- `msgbench-measured`: the measured CPUs, empty until a run's supervisor (msgbench/workers/procs.py,
  given --cpuset) or the noise-floor probe enters it just before it starts the measured
  processes, which inherit it.

Moving a task into a cpuset also narrows its own CPU mask to the set's CPUs, and moving it
back does not widen it again (the kernel keeps the narrowed mask), so tune saves each
thread's mask that was not simply "every CPU" and --revert gives every thread back either
that mask or the whole machine's CPUs.

Kernel threads bound to one CPU (ksoftirqd/1, the per-CPU kworkers) cannot move and stay:
they are the measurement's own kernel work (its interrupts, its network stack), which
msgbench/data/noise.py names as such. `msgbench tune --revert` moves every task back to the root
cpuset and removes both sets.

This needs the cgroup v1 cpuset hierarchy (mounted at /sys/fs/cgroup/cpuset, or
$MSGBENCH_CPUSET_ROOT: the tests point it at a child cpuset of their own, so that only their
own processes are moved). Under cgroup v2 the processes sit in systemd's slices and a shield
means a partition per slice; msgbench does not do that (docs/decisions.md), and doctor says
`isolcpus=` is the way there.
"""

import contextlib
import errno
import json
import os
from dataclasses import dataclass
from pathlib import Path

from msgbench.workers.cpulist import cpu_list, parse_cpu_list

BASE_ENV = "MSGBENCH_CPUSET_ROOT"
SYSFS_ROOT_ENV = "MSGBENCH_SYSFS_ROOT"  # msgbench/running/tuning.py's fake tree: no real cpuset under it
CPUSET_MOUNT = "sys/fs/cgroup/cpuset"
REST, MEASURED = "msgbench-rest", "msgbench-measured"


class ShieldError(RuntimeError):
    pass


@dataclass(frozen=True)
class Shield:
    rest: frozenset[int]
    measured: frozenset[int]
    measured_path: str  # the cpuset a measured process enters

    def describe(self) -> str:
        return (f"shielded: CPUs {cpu_list(self.measured)} for measurements only; the rest of the "
                f"machine on {cpu_list(self.rest)} (msgbench tune --revert undoes it)")


def base() -> Path:
    return Path(os.environ.get(BASE_ENV) or Path(os.environ.get(SYSFS_ROOT_ENV) or "/") / CPUSET_MOUNT)


def available() -> bool:
    """A cpuset hierarchy this process can build a shield in."""
    return (base() / "cgroup.procs").is_file() and (base() / "cpuset.cpus").is_file()


def _parse(text: str) -> frozenset[int]:
    return parse_cpu_list(text.strip())


def active() -> Shield | None:
    """The shield msgbench tune built, or None."""
    try:
        rest = (base() / REST / "cpuset.cpus").read_text()
        measured = (base() / MEASURED / "cpuset.cpus").read_text()
    except OSError:
        return None
    if not rest.strip() or not measured.strip():
        return None
    return Shield(rest=_parse(rest), measured=_parse(measured), measured_path=str(base() / MEASURED))


def path_for(cpus: frozenset[int] | None) -> str | None:
    """The cpuset a process to be placed on `cpus` (None: anywhere) must enter before it sets
    its affinity, or None when it may stay where the harness is. With a shield up, the
    harness is in the rest: a measured process enters the shielded set, and one left to the
    scheduler (--cpus unpinned, or a broker then) goes back to the whole machine."""
    shield = active()
    if shield is None or (cpus and cpus <= shield.rest):
        return None
    if cpus and cpus <= shield.measured:
        return shield.measured_path
    return str(base())


def place(cpus: frozenset[int] | None, path: str | None) -> None:
    """In a child between fork and exec: enter `path` (from path_for, computed before the
    fork), then take `cpus`; what it execs inherits both."""
    enter(path)
    if cpus:
        os.sched_setaffinity(0, cpus)


def enter(path: str | None) -> None:
    """Move the calling process into a cpuset (before it sets its affinity inside it); safe
    in a child between fork and exec."""
    if path:
        with open(os.path.join(path, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))


def _procs(folder: Path) -> list[int]:
    try:
        return [int(line) for line in (folder / "cgroup.procs").read_text().split()]
    except OSError:
        return []


def _move(pid: int, to: Path) -> bool:
    """One process (all its threads) into a cpuset; False for one that cannot move (a kernel
    thread bound to one CPU: EINVAL) or is gone (ESRCH)."""
    try:
        with open(to / "cgroup.procs", "w") as f:
            f.write(str(pid))
        return True
    except OSError as exc:
        if exc.errno in (errno.EINVAL, errno.ESRCH, errno.ENOSPC):
            return False
        raise ShieldError(f"cannot move task {pid} into {to}: {exc.strerror or exc}") from None


def _make(folder: Path, cpus: frozenset[int], mems: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / "cpuset.cpus").write_text(cpu_list(cpus))
    (folder / "cpuset.mems").write_text(mems)


def _threads(pid: int) -> list[int]:
    try:
        return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


def _own_masks(pids: list[int], every: frozenset[int]) -> dict[str, str]:
    """Thread id -> its CPU list, for the threads whose mask is narrower than `every`."""
    found = {}
    for pid in pids:
        for tid in _threads(pid):
            try:
                mask = frozenset(os.sched_getaffinity(tid))
            except OSError:
                continue
            if mask != every:
                found[str(tid)] = cpu_list(mask)
    return found


def build(rest: frozenset[int], measured: frozenset[int], state: Path) -> list[str]:
    """Create the two cpusets and move every process of the base into `rest`; `state` keeps
    the threads' own CPU masks for remove()."""
    if not available():
        raise ShieldError(f"no cgroup v1 cpuset hierarchy at {base()}: cannot shield the measured CPUs "
                          "(cgroup v2: boot with isolcpus= instead)")
    mems = (base() / "cpuset.mems").read_text().strip()
    every = _parse((base() / "cpuset.cpus").read_text())
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps(_own_masks(_procs(base()), every)))  # before any move: revert needs it
    try:
        _make(base() / REST, rest, mems)
        _make(base() / MEASURED, measured, mems)
    except OSError as exc:
        raise ShieldError(f"cannot create the shield's cpusets under {base()}: {exc.strerror or exc}") from None
    moved = 0
    for _ in range(3):  # processes forked while we move the others: a later pass takes them
        moved += sum(_move(pid, base() / REST) for pid in _procs(base()))
    stayed = len(_procs(base()))
    return [f"shield: CPUs {cpu_list(measured)} kept for measurements; {moved} processes moved to CPUs "
            f"{cpu_list(rest)}; {stayed} kernel threads bound to a CPU stay where they are"]


def remove(state: Path) -> list[str]:
    """Every process back into the base cpuset with its threads' own masks (or every CPU);
    both sets removed."""
    shield_dirs = [base() / name for name in (REST, MEASURED) if (base() / name).is_dir()]
    if not shield_dirs:
        return []
    try:
        masks = json.loads(state.read_text())
    except (OSError, ValueError):
        masks = {}
    every = _parse((base() / "cpuset.cpus").read_text())
    moved = 0
    for folder in shield_dirs:
        for _ in range(3):
            back = [pid for pid in _procs(folder) if _move(pid, base())]
            moved += len(back)
            for tid in (tid for pid in back for tid in _threads(pid)):
                own = masks.get(str(tid))
                with contextlib.suppress(OSError):  # gone since, or a thread that may not move
                    os.sched_setaffinity(tid, _parse(own) & every or every if own else every)
        try:
            folder.rmdir()
        except OSError as exc:
            raise ShieldError(f"cannot remove {folder}: {exc.strerror or exc} (processes still in it: "
                              f"{len(_procs(folder))})") from None
    state.unlink(missing_ok=True)
    return [f"shield removed: {moved} processes back on every CPU"]
