"""What a capacity search varies for a workload: an Axis (the --load name, how a
step's params are made and its load read back, how far this machine can go).

Each workload's axes are its run-side plug-in's (RunPlugin.capacity_axes,
msgbench/running/workloads/); msgbench/running/capacity_run.py drives the search over
them and names no workload.
"""

from collections.abc import Callable
from dataclasses import dataclass


class AxisError(ValueError):
    """A load axis that does not apply; the message names it and what does."""


@dataclass(frozen=True)
class Axis:
    """What the search varies for a workload, and how a step's load is read back."""

    workload: str
    name: str  # the --load name and the scenario's x: rate, users
    unit: str
    latency: str = "latency_ns"  # the histogram the bound applies to
    latency_max: str = "latency_max_ns"  # the measured fact that caps its percentiles

    def params_for(self, load: float, base: dict) -> dict:
        raise NotImplementedError

    def load_of(self, params: dict) -> float:
        raise NotImplementedError

    def achieved(self, metrics: dict, params: dict) -> float | None:
        raise NotImplementedError

    def quantize(self, base: dict) -> Callable[[float], float]:
        return lambda load: max(1, round(load))

    def default_start(self, base: dict) -> float:
        raise NotImplementedError

    def machine_limit(self, base: dict, target, headroom: float) -> tuple[float | None, str]:
        """The largest load this machine can run (and why), or None; headroom: the share
        of its memory a plan may fill."""
        return None, ""

    def defaults(self) -> dict:
        """The parameters this axis's search starts from, under the ones given."""
        return {}

    def checked(self, base: dict) -> dict:
        """The fixed parameters with what this axis needs of them, or AxisError."""
        return base


@dataclass(frozen=True)
class OpenLoopRate(Axis):
    """A workload's `rate` parameter, offered in open loop and read back as the
    msgs_per_s it achieved (pubsub's messages, socket's round trips); a search starts
    at 1,000/s."""

    def load_of(self, params):
        return float(params["rate"])

    def achieved(self, metrics, params):
        return metrics.get("msgs_per_s")

    def default_start(self, base):
        return 1000.0
