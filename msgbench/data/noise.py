"""What other work ran beside a measurement, by name.

runner.py stores one figure, other_cpu_share: the share of all CPUs that work other than
the measurement took while its worker ran. This module says what that work was. A
snapshot of /proc/stat's counters and of every process's CPU ticks (/proc/PID/stat) is
taken before and after each worker, outside its timed section; the difference is shared
out between

- named other processes (command name, pid and share of all CPUs): a compile, a browser,
  another benchmark: what makes a point untrustworthy;
- steal: time the hypervisor gave this VM's vCPUs to someone else;
- irq: hard and soft interrupts handled in interrupt context;
- kernel threads (kthreadd's children: ksoftirqd, kworker ...): mostly the measurement's
  own kernel work (a socket's softirqs, writeback), not competition.

The harness itself, the worker's session and the run's brokers are left out: they are
the measurement. A process that started and ended between the snapshots is not seen
(its time shows only in other_cpu_share); results.py says so when most of the share is
unnamed.

Each snapshot is one pass over /proc, twice per worker, outside its timed section.
"""

import os
import time
from dataclasses import dataclass

KTHREADD_PID = 2  # the parent of every kernel thread
TOP_PROCESSES = 12  # named in a measurement, the busiest first
# A process that took less than this share of all CPUs is not named: at 100 ticks a
# second a one-second window cannot tell smaller shares from a tick's rounding.
NAMED_SHARE = 0.01


@dataclass
class Snapshot:
    at: float  # time.monotonic()
    steal: int  # ticks, all CPUs (/proc/stat)
    irq: int  # irq + softirq ticks
    # (pid, start time) -> (command name, parent pid, session, utime + stime ticks)
    processes: dict


def snapshot(proc: str = "/proc") -> Snapshot | None:
    """The machine's counters now, or None where there is no /proc (not Linux)."""
    at = time.monotonic()
    try:
        with open(f"{proc}/stat") as f:
            fields = f.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    irq, softirq, steal = int(fields[6]), int(fields[7]), int(fields[8])
    processes = {}
    for entry in os.scandir(proc):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"{proc}/{entry.name}/stat") as f:
                text = f.read()
        except OSError:  # ended meanwhile
            continue
        name, rest = text[text.index("(") + 1:].rsplit(")", 1)
        stat = rest.split()
        # After the name: [1] parent, [3] session, [11] utime, [12] stime, [19] start time.
        processes[(int(entry.name), int(stat[19]))] = (name, int(stat[1]), int(stat[3]),
                                                       int(stat[11]) + int(stat[12]))
    return Snapshot(at, steal, irq + softirq, processes)


def other_work(before: Snapshot | None, after: Snapshot | None, exclude_pids: set[int],
               exclude_sessions: set[int], cpus: int | None = None) -> dict | None:
    """The other work between two snapshots, as shares of all CPUs over the interval:
    {"processes": [{"name", "pid", "share"}], "kernel_threads": share, "kernel_thread_names":
    [the busiest], "steal": share, "irq": share}; None without both snapshots."""
    if before is None or after is None or after.at <= before.at:
        return None
    hz = os.sysconf("SC_CLK_TCK")
    capacity = (after.at - before.at) * hz * (cpus or os.cpu_count() or 1)  # ticks all CPUs could give

    def share(ticks: float) -> float:
        return round(max(0.0, ticks) / capacity, 3)

    named, kernel, kernel_names = [], 0, {}
    for key, (name, parent, session, ticks) in after.processes.items():
        pid = key[0]
        if pid in exclude_pids or session in exclude_sessions:
            continue
        earlier = before.processes.get(key)
        used = ticks - (earlier[3] if earlier else 0)  # a process started meanwhile: all its time
        if used <= 0:
            continue
        if parent == KTHREADD_PID or pid == KTHREADD_PID:
            kernel += used
            kernel_names[name] = kernel_names.get(name, 0) + used
        else:
            named.append((used, name, pid))
    named.sort(reverse=True)
    return {
        "processes": [{"name": name, "pid": pid, "share": share(used)}
                      for used, name, pid in named[:TOP_PROCESSES] if share(used) >= NAMED_SHARE],
        "kernel_threads": share(kernel),
        "kernel_thread_names": [n for n, _ in sorted(kernel_names.items(), key=lambda kv: -kv[1])[:3]],
        "steal": share(after.steal - before.steal),
        "irq": share(after.irq - before.irq),
    }


def causes(infos: list[dict]) -> list[tuple[str, float]]:
    """(cause, its largest share) over the other_work of several repetitions, the
    largest first: "sha256sum (pid 4242)", "steal", "kernel threads (ksoftirqd/0)", "irq"."""
    found: dict[str, float] = {}
    kernel_names: list[str] = []

    def note(label: str, value: float) -> None:
        found[label] = max(found.get(label, 0.0), value)

    for info in infos:
        for p in info.get("processes", []):
            note(f"{p['name']} (pid {p['pid']})", p["share"])
        note("steal", info.get("steal", 0.0))
        note("kernel threads", info.get("kernel_threads", 0.0))
        kernel_names += [n for n in info.get("kernel_thread_names") or [] if n not in kernel_names]
        note("irq", info.get("irq", 0.0))
    if kernel_names and "kernel threads" in found:  # which ones: the measurement's own, mostly
        found[f"kernel threads ({', '.join(kernel_names[:3])})"] = found.pop("kernel threads")
    return sorted(((label, v) for label, v in found.items() if v >= NAMED_SHARE), key=lambda kv: -kv[1])
