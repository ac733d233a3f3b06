"""pubsub, the run side: the variant's lossless setting, and its roles on other hosts:
the broker (a service), the sources (the worker) and the receivers (the peer the
worker starts).

The sources and receivers take one host each: each receiver must see every source's
messages, so a split would need the harness to merge one-way latencies taken on several
clocks, and the sources to start receivers on other hosts (docs/hosts.md).
"""

from dataclasses import dataclass

from msgbench.core import spec
from msgbench.hosts.placement import PEER, SERVICE, WORKER, PlacementError
from msgbench.running.capacity_axis import AxisError, OpenLoopRate
from msgbench.running.workloads.plugin import RunPlugin


def variant_facts(variant) -> dict:
    """Whether the variant promises no loss (target.toml's lossless): the verify rules
    expect loss only where it does not."""
    return {"lossless": int(bool(variant.lossless))}


def check_hosts(jobs: list, peers) -> list[str]:
    """One-way latency (rate > 0) subtracts a source's CLOCK_MONOTONIC stamp from a
    receiver's reading: one clock only where both run on one kernel (one boot id: this
    machine, namespaces or containers of it). Across kernels the monotonic clocks have
    no common origin, and the wall-clock offset measured does not relate them: such a
    run is refused before launch."""
    if not any(float(j.params.get("rate", 0)) > 0 for j in jobs):
        return []
    sources = peers.host_of("sources")
    receivers = peers.host_of("receivers") or sources
    if sources is receivers:
        return []
    boot = peers.boot_id(sources)
    if boot and boot == peers.boot_id(receivers):
        return ["pubsub's one-way latency is on one clock: the sources' and receivers' hosts run one kernel "
                "(the same boot id)"]
    where = " and ".join(h.alias if h else "this machine" for h in (sources, receivers))
    raise PlacementError(
        f"pubsub at rate > 0 times one-way latency from CLOCK_MONOTONIC stamps, which {where} (two kernels) do "
        "not share; the hosts' wall-clock offset is measured, but does not relate monotonic clocks: place "
        "sources and receivers on one host, or measure throughput at rate=0 (docs/hosts.md)")


@dataclass(frozen=True)
class PubsubRate(OpenLoopRate):
    """pubsub's offered message rate, all sources together, open loop."""

    def params_for(self, load, base):
        return base | {"rate": load}

    def machine_limit(self, base, target, headroom):
        highest = spec.workload("pubsub").params["rate"]["maximum"]
        return float(highest), "the largest rate pubsub's spec takes"

    def checked(self, base):
        if "rate" in base:
            raise AxisError(f"-p rate={base['rate']}: the capacity search sets pubsub's rate itself; "
                            "give where it starts with --start")
        return base


PLUGIN = RunPlugin(name="pubsub", variant_facts=variant_facts, check_hosts=check_hosts,
                   capacity_axes=(PubsubRate("pubsub", "rate", "msg/s"),),
                   roles={"broker": SERVICE, "sources": WORKER, "receivers": PEER})
