"""The machine's own limits, measured: the yardsticks of the ceilings (docs/limits.md).

`msgbench limits` (or `msgbench run --limits`) runs targets/c's bin/msgbench-limits, a
small C program: memcpy bandwidth, a pipe ping-pong between two threads (placed by the
scheduler, and pinned to two cores) and loopback TCP bandwidth with 1 MiB writes. What it
printed is checked here and kept in the run's metadata under "limits", so an exported and
imported run carries it; msgbench/views/report/limits.py sets the ceilings against it.
"""

import contextlib
import errno
import json
import shlex
import socket
import subprocess

from msgbench.data.store import Store, now_iso
from msgbench.workers import sysinfo, targets

# Each figure and the counts it was computed from: all must be there, numbers, above 0.
FIGURES = {
    "memcpy_bytes_per_s": "memcpy bandwidth",
    "pipe_round_trips_per_s": "pipe ping-pong round trips",
    "pipe_cross_core_round_trips_per_s": "pipe ping-pong round trips, one thread per core",
    "loopback_bytes_per_s": "loopback TCP bandwidth (1 MiB writes)",
}
COUNTS = ("memcpy_copies", "pipe_round_trips", "pipe_seconds", "pipe_cross_core_round_trips",
          "pipe_cross_core_seconds", "loopback_bytes", "loopback_seconds", "cores")
DEFAULT_SECONDS = 0.5


class LimitsError(RuntimeError):
    pass


def parse(text: str) -> dict:
    """The program's output (one JSON object) as a dict, or LimitsError naming what is wrong."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) != 1:
        raise LimitsError(f"msgbench-limits printed {len(lines)} lines; expected one JSON object")
    try:
        data = json.loads(lines[0])
    except json.JSONDecodeError as exc:
        raise LimitsError(f"msgbench-limits printed {lines[0][:80]!r}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise LimitsError(f"msgbench-limits printed {lines[0][:80]!r}: expected a JSON object")
    for name in (*FIGURES, *COUNTS):
        value = data.get(name)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise LimitsError(f"msgbench-limits: {name} = {value!r}: expected a number above 0")
    # The figures follow from their counts; a rate that does not is a broken program.
    for rate, count, seconds in (("pipe_round_trips_per_s", "pipe_round_trips", "pipe_seconds"),
                                 ("loopback_bytes_per_s", "loopback_bytes", "loopback_seconds")):
        if abs(data[rate] - data[count] / data[seconds]) > 0.01 * data[rate] + 1:
            raise LimitsError(f"msgbench-limits: {rate} = {data[rate]} is not {count} / {seconds}")
    return data


def command(seconds: float = DEFAULT_SECONDS) -> list[str]:
    return [str(targets.target("c").folder / "bin" / "msgbench-limits"), f"{seconds:g}"]


# One measurement of the limits at a time on a machine: two at once measure each other.
# An abstract Unix socket is the lock: machine-wide, freed by the kernel when its holder
# ends however it ends (SIGKILL too), and it leaves no file behind.
LOCK_NAME = "\0msgbench-limits"


@contextlib.contextmanager
def machine_lock():
    lock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            lock.bind(LOCK_NAME)
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                raise
            raise LimitsError("another `msgbench limits` (or run --limits) is measuring on this machine now, and two "
                              "at once measure each other: wait for it to end, then run again") from None
        yield
    finally:
        lock.close()


def measure(seconds: float = DEFAULT_SECONDS, build: bool = True) -> dict:
    """Measure the limits now (each for `seconds`); the result names its command and time."""
    if not 0 < seconds <= 60:
        raise LimitsError(f"--seconds {seconds:g}: give a time per measurement above 0 and at most 60 s")
    if build:
        targets.build(targets.target("c"))
    argv = command(seconds)
    try:
        with machine_lock():
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=30 + 5 * seconds, check=False)
    except FileNotFoundError:
        raise LimitsError(f"{argv[0]} is missing: build targets/c (make build)") from None
    except subprocess.TimeoutExpired:
        raise LimitsError(f"{shlex.join(argv)} did not finish in {30 + 5 * seconds:g} s") from None
    if proc.returncode != 0:
        raise LimitsError(f"{shlex.join(argv)} failed (exit {proc.returncode}): {proc.stderr.strip()[-500:]}")
    data = parse(proc.stdout)
    return data | {"command": "targets/c/bin/msgbench-limits " + shlex.join(argv[1:]), "measured_at": now_iso()}


def lines(limits: dict) -> list[str]:
    """The limits for people, one line each, with the counts behind them."""
    return [
        f"memcpy bandwidth: {limits['memcpy_bytes_per_s'] / 1e9:.2f} GB/s "
        f"(best of {limits['memcpy_copies']} copies of {limits.get('memcpy_copy_bytes', 0) >> 20} MiB)",
        f"pipe ping-pong: {limits['pipe_round_trips_per_s']:,.0f} round trips/s "
        f"({limits['pipe_round_trips']:,} in {limits['pipe_seconds']:.2f} s; threads placed by the scheduler)",
        f"pipe ping-pong, one thread per core: {limits['pipe_cross_core_round_trips_per_s']:,.0f} round trips/s "
        f"({limits['pipe_cross_core_round_trips']:,} in {limits['pipe_cross_core_seconds']:.2f} s)",
        f"loopback TCP: {limits['loopback_bytes_per_s'] / 1e9:.2f} GB/s "
        f"({limits['loopback_bytes'] >> 20} MiB in {limits['loopback_seconds']:.2f} s, 1 MiB writes)",
        f"measured by: {limits.get('command', '?')} on {limits['cores']} cores",
    ]


def store_run(store: Store, command: str, measured: dict) -> str:
    """A run of its own holding only the limits (in its metadata, as --limits puts them)."""
    run_id = store.start_run(command, None, sysinfo.collect({}) | {"limits": measured}, [])
    store.finish_run(run_id, "complete")
    return run_id
