"""Building every target at once, within the machine's cores, and timing each build.

One after another, a fresh machine's builds took most of `make run`'s first quarter hour,
although much of each is waiting (Maven and cargo reading their caches, the linker, a
compiler on one file). Two builds at a time fill those waits. Each build keeps its output
to itself (shown when it fails) and its time, which `msgbench build` prints as a line per
target and a total, and remembers, so that the next time the longest builds start first
and the last one to finish is not a long one started late.
"""

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Built:
    name: str
    seconds: float
    error: str | None = None


def _load(path: Path) -> dict[str, float]:
    try:
        found = json.loads(path.read_text())
        return {k: float(v) for k, v in found.items()} if isinstance(found, dict) else {}
    except (OSError, ValueError, TypeError):
        return {}


def order(names: list[str], remembered: dict[str, float]) -> list[str]:
    """The longest builds first (as last timed); the ones never timed first of all, in
    their given order, since any of them may be long."""
    return sorted(names, key=lambda n: (n in remembered, -remembered.get(n, 0.0)))


def build_all(steps: dict[str, Callable[[], None]], jobs: int, times_file: Path,
              say: Callable[[str], None]) -> list[Built]:
    """Run each named build step, `jobs` at a time; a step raises to fail (its message is
    kept). Returns every step's result in the order they finished."""
    remembered = _load(times_file)
    done: list[Built] = []
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        started = {}
        for name in order(list(steps), remembered):
            started[pool.submit(_timed, name, steps[name])] = name
        for future in as_completed(started):
            result = future.result()
            done.append(result)
            if result.error is None:
                say(f"built {result.name} in {result.seconds:.0f} s")
                remembered[result.name] = round(result.seconds, 1)
    try:
        times_file.parent.mkdir(parents=True, exist_ok=True)
        times_file.write_text(json.dumps(remembered, indent=1, sort_keys=True) + "\n")
    except OSError:
        pass  # only an ordering hint for the next build
    return done


def _timed(name: str, step: Callable[[], None]) -> Built:
    started = time.monotonic()
    try:
        step()
    except Exception as exc:  # a build's own failure, reported with its output
        return Built(name, time.monotonic() - started, str(exc))
    return Built(name, time.monotonic() - started)
