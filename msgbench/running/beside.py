"""Measuring while the targets still build: `msgbench run`'s builds run beside it.

On a fresh machine the builds take minutes (CAF's C++ alone about four); measuring only
after the last of them leaves the first figure a quarter of an hour away. So the run
starts its builds in the background (building.Builder; they yield the CPU to each measurement) and measures
each scenario as soon as every target it compares is built:

- a scenario waits for all of its targets, never measures some now and the late ones
  later: its targets' repetitions stay interleaved under the same conditions, which is
  what makes them comparable;
- scenarios go in the order their builds end (a scenario of quick-to-build targets
  first), each one's rows printed as its planned repetitions end;
- a measurement taken while builds still ran names them (`beside_builds` in its worker
  facts), and its point says so in its warnings: the builds are at idle priority while it runs, so
  they take only the CPU time the measurement leaves, but they still share the caches,
  the memory bus and, on a VM, perhaps a physical core;
- when what is left to build should end within QUIET_WAIT_S (a machine where everything
  was built before: the builds only find nothing to do), the run waits for it rather
  than measure beside it;
- a target whose build failed is not measured: its points are stored as failed, with
  the build's error and where its whole output is, and the others run.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from msgbench.running import building

# Builds expected to end within this are waited for: a few seconds of waiting is cheaper
# than figures measured beside a build.
QUIET_WAIT_S = 15.0


@dataclass
class BuildsBeside:
    builder: building.Builder
    needs: Callable[[object], list[str]]  # the build steps a job needs (its target's, a load generator's)
    yielding: building.Yielding = field(default_factory=building.Yielding)  # the builds' processes
    # Called once, when every build has ended: metadata to add to the run (the noise probe).
    on_quiet: Callable[[], dict] | None = None
    _quiet_done: bool = field(default=False, init=False)

    def next_scenario(self, pending: dict[str, list]) -> str:
        """The first pending scenario (in the plan's order) whose builds have all ended;
        waits for one. When the rest of the builds should end soon, waits for them all."""
        while True:
            if not self.builder.all_done() and self.builder.expected_left_s() <= QUIET_WAIT_S:
                self.builder.wait_any(timeout=QUIET_WAIT_S)
                continue
            for name, jobs in pending.items():
                if all(self.built(job) is not None for job in jobs):
                    return name
            self.builder.wait_any()

    def built(self, job) -> str | None:
        """"" once every build the job needs has ended well; the first one's error if one
        failed; None while one still runs or waits."""
        needed = [n for n in self.needs(job) if n in self.builder.steps]
        ended = self.builder.ended(needed)
        if len(ended) < len(needed):
            return None
        return next((b.error for b in ended.values() if b.error is not None), "")

    def under_way(self) -> list[str]:
        return self.builder.under_way()

    def measuring(self, now: bool) -> None:
        """A measurement begins (True) or has ended (False): the builds yield the CPU
        meanwhile (idle priority), and are normal processes between measurements."""
        self.yielding.yield_cpu(now)

    def quiet_check(self) -> dict:
        """Once every build has ended, once: what on_quiet measured, for the run's
        metadata (the noise floor, probed on the machine without the builds); else {}."""
        if self._quiet_done or not self.builder.all_done():
            return {}
        self._quiet_done = True
        return self.on_quiet() if self.on_quiet is not None else {}
