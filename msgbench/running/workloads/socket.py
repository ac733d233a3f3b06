"""socket (seed 002), the run side: its one role on other hosts, its server half (the
peer the worker starts)."""

from msgbench.hosts.placement import PEER
from msgbench.running.workloads.plugin import RunPlugin


def check_place(jobs: list, place: dict) -> str | None:
    """--place server=... places the server half, which runs apart only with placement=remote."""
    mine = [j for j in jobs if j.scenario.workload == "socket"]
    if "server" in place and mine and not any(j.params.get("placement") == "remote" for j in jobs):
        return "--place server=... places socket's server half: give -p placement=remote too"
    return None


PLUGIN = RunPlugin(name="socket", check_place=check_place, roles={"server": PEER})
