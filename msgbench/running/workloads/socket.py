"""socket (seed 002), the run side: its one role on other hosts, its server half (the
peer the worker starts), and its capacity axis (echo's request rate, open loop)."""

import math
from dataclasses import dataclass

from msgbench.core import spec
from msgbench.hosts.placement import PEER
from msgbench.running.capacity_axis import AxisError, OpenLoopRate
from msgbench.running.workloads.plugin import RunPlugin

# How long a capacity step offers its rate: socket has no duration, so the axis sizes each
# step's sequence (total_bytes) to last this long; 3 s holds thousands of round trips even
# at a few hundred per second, enough for a p99.
STEP_S = 3.0


def check_place(jobs: list, place: dict) -> str | None:
    """--place server=... places the server half, which runs apart only with placement=remote."""
    mine = [j for j in jobs if j.scenario.workload == "socket"]
    if "server" in place and mine and not any(j.params.get("placement") == "remote" for j in jobs):
        return "--place server=... places socket's server half: give -p placement=remote too"
    return None


@dataclass(frozen=True)
class EchoRate(OpenLoopRate):
    """socket echo's offered round trips per second, all sockets together, open loop;
    each step's sequence lasts about STEP_S."""

    def params_for(self, load, base):
        per_socket = math.ceil(load / base["sockets"] * STEP_S)
        return base | {"rate": load, "total_bytes": base["size"] * max(1, per_socket)}

    def defaults(self):
        return {"mode": "echo"}

    def machine_limit(self, base, target, headroom):
        params = spec.workload("socket").params
        by_bytes = params["total_bytes"]["maximum"] // base["size"] * base["sockets"] / STEP_S
        highest = min(params["rate"]["maximum"], by_bytes)
        return float(highest), "the largest rate socket's spec takes at this size"

    def checked(self, base):
        for name in ("rate", "total_bytes"):
            if name in base:
                raise AxisError(f"-p {name}={base[name]}: the capacity search sets socket's {name} itself "
                                f"(rate from --start, total_bytes for a step of about {STEP_S:g} s)")
        if base.get("mode", "echo") != "echo":
            raise AxisError(f"-p mode={base['mode']}: socket's capacity is echo's request rate; flow has no "
                            "open loop (it sends as fast as it can)")
        return base


PLUGIN = RunPlugin(name="socket", check_place=check_place, roles={"server": PEER},
                   capacity_axes=(EchoRate("socket", "rate", "round trips/s"),))
