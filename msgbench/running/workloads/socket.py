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


PLUGIN = RunPlugin(name="socket", check_place=check_place, roles={"server": PEER},
                   capacity_refusal="socket has no capacity search yet: its echo workers send each message when the "
                                    "last returns (closed loop) and take no request rate; an open-loop echo needs a "
                                    "rate parameter in spec/workloads/socket.json and paced clients in every worker")
