"""What on this machine adds noise to figures (`msgbench doctor`), and what root can
change about it (`msgbench tune`, `msgbench tune --revert`, as pyperf's `system tune`
and `system reset`).

Every path is read under MSGBENCH_SYSFS_ROOT (default "/"), so tests run tune and revert
on a fake tree. tune saves each value it changes, the first time it changes it, in a
state file under that root; revert writes those back exactly and removes the file.
"""

import glob
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from msgbench.data import noise
from msgbench.workers import cpus, shield

ROOT_ENV = "MSGBENCH_SYSFS_ROOT"
STATE = "var/lib/msgbench/tune-state.json"
SHIELD_STATE = "var/lib/msgbench/shield-masks.json"  # each thread's own CPU mask (msgbench/workers/shield.py)
CPU = "sys/devices/system/cpu"
HALTPOLL = "sys/module/haltpoll/parameters/guest_halt_poll_ns"
# Idle polling on: the kernel's own default for haltpoll's guest_halt_poll_ns
# (Documentation/virt/guest-halt-polling.rst) is 200 µs. An idle vCPU then polls that long
# before it halts, so a wake-up from the other vCPU within 200 µs (a ping-pong's, a
# channel's hand-off) is seen without a trip through the hypervisor; longer idles still
# halt, so an idle machine costs its host little.
HALT_POLL_NS = "200000"
LOAD_SAMPLE_S = 0.5  # doctor's look at who uses the CPUs now


class TuneError(RuntimeError):
    pass


def root() -> Path:
    return Path(os.environ.get(ROOT_ENV) or "/")


def _read(relative: str) -> str | None:
    try:
        return (root() / relative).read_text().strip()
    except OSError:
        return None


def _cpu_files(name: str) -> list[str]:
    """Paths (relative to the root) of one cpufreq file per CPU, in CPU order."""
    base = root()
    found = glob.glob(str(base / CPU / "cpu[0-9]*" / "cpufreq" / name))
    return sorted((str(Path(p).relative_to(base)) for p in found), key=lambda p: int(p.split("/")[4][3:]))


# ---------------------------------------------------------------- doctor


@dataclass
class Source:
    name: str
    now: str
    effect: str  # what it does to figures
    tune: str  # what `msgbench tune` does about it, or why it cannot


def sources() -> list[Source]:
    """What adds noise on this machine, as doctor shows it."""
    found = [_load()]
    siblings = {_read(f"{CPU}/{Path(p).parent.name}/topology/thread_siblings_list")
                for p in glob.glob(str(root() / CPU / "cpu[0-9]*" / "topology"))}
    smt = sorted(s for s in siblings if s and ("," in s or "-" in s))
    found.append(Source("SMT siblings", ", ".join(smt) if smt else "none (one thread per core)",
                        "two threads on one core share its units: a worker beside its peer runs slower and "
                        "less steadily than on two cores" if smt else "-",
                        "no: placement keeps a point's processes off each other's siblings, or switch SMT off "
                        "in the firmware" if smt else "-"))
    governors = sorted({_read(p) for p in _cpu_files("scaling_governor")} - {None})
    found.append(Source("CPU frequency governor", ", ".join(governors) or "not exposed (a VM: the host decides)",
                        "a governor other than performance changes the clock under load: early repetitions "
                        "run slower" if governors else "-",
                        ("yes: performance" if governors != ["performance"] else "already performance")
                        if governors else "no: nothing to set here"))
    turbo = _turbo()
    found.append(Source("turbo / boost", turbo[0], turbo[1], turbo[2]))
    found.append(_idle_polling())
    found.append(_shield_source())
    isolated = _read(f"{CPU}/isolated")
    found.append(Source("isolated CPUs", isolated or "none",
                        "CPUs the scheduler leaves alone: a place to pin a measurement" if isolated else
                        "every CPU also runs the rest of the machine's work",
                        "no: isolcpus= on the kernel command line, then reboot"))
    return found


def _load() -> Source:
    average = (_read("proc/loadavg") or "?").split()[:3]
    before = noise.snapshot(str(root() / "proc"))
    time.sleep(LOAD_SAMPLE_S)
    work = noise.other_work(before, noise.snapshot(str(root() / "proc")), {os.getpid()}, set())
    top = ", ".join(f"{p['name']} (pid {p['pid']}) {p['share']:.0%}" for p in (work or {}).get("processes", [])[:3])
    steal = (work or {}).get("steal", 0)
    now = f"load average {' '.join(average)}" + (f"; now: {top}" if top else "; nothing busy now")
    if steal >= noise.NAMED_SHARE:
        now += f"; steal {steal:.0%}"
    return Source("other load", now, "other work competes for the cores a measurement times (its warning names "
                                     "it: machine busy)", "no: stop it, or run on a quiet machine")


def _shield_source() -> Source:
    up = shield.active()
    if up is not None:
        return Source("shield", up.describe(), "nothing else runs on the measured CPUs", "already up")
    effect = "the machine's other work may run on the measured CPU beside the worker"
    if not shield.available():
        return Source("shield", "not possible (no cgroup v1 cpuset)", effect, "no: isolcpus= on the kernel "
                      "command line, then reboot")
    return Source("shield", "none", effect, "yes: every other process moved to the harness's CPU "
                  "(cpusets, as cset shield)")


def _turbo() -> tuple[str, str, str]:
    no_turbo, boost = _read(f"{CPU}/intel_pstate/no_turbo"), _read(f"{CPU}/cpufreq/boost")
    effect = "turbo clocks depend on temperature and on how many cores are busy: figures drift"
    if no_turbo is not None:
        return (f"intel_pstate turbo {'off' if no_turbo == '1' else 'on'}", effect,
                "already off" if no_turbo == "1" else "yes: off")
    if boost is not None:
        return f"boost {'on' if boost == '1' else 'off'}", effect, "yes: off" if boost == "1" else "already off"
    return "not exposed (a VM: the host decides)", "-", "no: nothing to set here"


def _idle_polling() -> Source:
    driver = _read(f"{CPU}/cpuidle/current_driver")
    poll = _read(HALTPOLL)
    if poll is None:
        return Source("idle polling", f"cpuidle driver {driver or 'none'}; no haltpoll",
                      "-", "no: nothing to set here")
    if poll == "0":
        return Source("idle polling", f"haltpoll guest_halt_poll_ns = 0 (driver {driver})",
                      "every idle vCPU halts at once, so each wake-up from the other vCPU (a message "
                      "hand-off) goes through the hypervisor: slow and uneven",
                      f"yes: guest_halt_poll_ns = {HALT_POLL_NS} (poll 200 µs before halting)")
    return Source("idle polling", f"haltpoll guest_halt_poll_ns = {poll} (driver {driver})",
                  "an idle vCPU polls before it halts: quick wake-ups", "already on")


# ---------------------------------------------------------------- tune and revert


def wanted() -> dict[str, str]:
    """Path (relative to the root) -> the value tune writes, for what this machine exposes."""
    changes = {path: "performance" for path in _cpu_files("scaling_governor")}
    if _read(f"{CPU}/intel_pstate/no_turbo") is not None:
        changes[f"{CPU}/intel_pstate/no_turbo"] = "1"
    elif _read(f"{CPU}/cpufreq/boost") is not None:
        changes[f"{CPU}/cpufreq/boost"] = "0"
    if _read(HALTPOLL) == "0":  # raised from 0 only: a value someone chose is left as it is
        changes[HALTPOLL] = HALT_POLL_NS
    return changes


def _require_root(action: str) -> None:
    if os.geteuid() != 0:
        raise TuneError(f"msgbench {action} writes /sys and needs root: run it with sudo")


def _write(relative: str, value: str) -> None:
    try:
        (root() / relative).write_text(value + "\n")
    except OSError as exc:
        raise TuneError(f"cannot write {value!r} to /{relative}: {exc.strerror or exc}") from None


def _load_state() -> dict[str, str]:
    path = root() / STATE
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise TuneError(f"{path}: not a msgbench tune state ({exc}); remove it once its values are checked") \
            from None


def _save_state(state: dict[str, str]) -> None:
    path = root() / STATE
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(state, indent=1, sort_keys=True) + "\n")
    temporary.replace(path)  # whole or not at all: a revert must never read half a state


def tune() -> list[str]:
    """Apply what makes figures steadier; lines saying what changed. The value before the
    first tune is kept: a second tune does not overwrite it."""
    _require_root("tune")
    state = _load_state()
    lines = []
    for relative, value in wanted().items():
        before = _read(relative)
        if before is None or before == value:
            continue
        if relative not in state:
            state[relative] = before
            _save_state(state)  # saved before written: an interrupted tune can still be reverted
        _write(relative, value)
        lines.append(f"/{relative}: {before} -> {value}")
    lines += _shield_up()
    return lines or ["nothing to change: " + ("already tuned" if state else "this machine exposes nothing tune sets")]


def _shield_up() -> list[str]:
    """Keep the rest of the machine off the CPUs --cpus pinned measures on (msgbench/workers/shield.py)."""
    if shield.active() is not None:
        return []
    if not shield.available():
        return [f"shield: not possible here (no cgroup v1 cpuset at {shield.base()}); boot with isolcpus= "
                "to keep other work off the measured CPUs"]
    split = cpus.layout(cpus.PINNED)
    if not split.measured:
        return ["shield: not possible here (one CPU: nothing to keep apart)"]
    try:
        return shield.build(split.harness, split.measured, root() / SHIELD_STATE)
    except shield.ShieldError as exc:
        shield.remove(root() / SHIELD_STATE)
        raise TuneError(str(exc)) from None


def revert() -> list[str]:
    """Write back every value tune saved, and forget them."""
    _require_root("tune --revert")
    try:
        lines = shield.remove(root() / SHIELD_STATE)
    except shield.ShieldError as exc:
        raise TuneError(str(exc)) from None
    state = _load_state()
    if not state:
        return lines or ["nothing to revert: msgbench tune changed nothing here"]
    for relative, value in sorted(state.items()):
        now = _read(relative)
        if now != value:
            _write(relative, value)
            lines.append(f"/{relative}: {now} -> {value}")
        else:
            lines.append(f"/{relative}: {value} (unchanged)")
    (root() / STATE).unlink()
    return lines
