"""pubsub, the run side: the variant's lossless setting, and its roles on other hosts:
the broker (a service), the sources (the worker) and the receivers (the peer the
worker starts).

The sources and receivers take one host each: each receiver must see every source's
messages, so a split would need the harness to merge one-way latencies taken on several
clocks, and the sources to start receivers on other hosts (docs/hosts.md).
"""

from msgbench.hosts.placement import PEER, SERVICE, WORKER
from msgbench.running.workloads.plugin import RunPlugin


def variant_facts(variant) -> dict:
    """Whether the variant promises no loss (target.toml's lossless): the verify rules
    expect loss only where it does not."""
    return {"lossless": int(bool(variant.lossless))}


PLUGIN = RunPlugin(name="pubsub", variant_facts=variant_facts,
                   roles={"broker": SERVICE, "sources": WORKER, "receivers": PEER})
