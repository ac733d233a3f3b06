"""The workloads' plug-ins: one registry, one Plugin per workload (plugin.py).

Adding a workload: spec/workloads/<name>.json, and, only if it needs more than the
spec states, msgbench/workloads/<name>.py with a PLUGIN listed below.
"""

from msgbench.workloads import chat, fanin, pubsub, ring, socket
from msgbench.workloads.plugin import Plugin

__all__ = ["PLUGINS", "Plugin", "judged_metric", "order", "plugin"]

PLUGINS: dict[str, Plugin] = {p.name: p for p in (
    ring.PLUGIN, fanin.PLUGIN, socket.PLUGIN, pubsub.PLUGIN, chat.PLUGIN)}


def plugin(workload: str) -> Plugin:
    """The workload's plug-in; the generic one for a workload with no module."""
    return PLUGINS.get(workload) or Plugin(name=workload)


def order(workloads) -> list[str]:
    """Workload names in section order: the plug-ins' order, then by name."""
    return sorted(workloads, key=lambda w: (plugin(w).order, w))


def judged_metric(workload: str, params: dict, primary_metric: str) -> str:
    """The metric a point is judged by: its plug-in's choice for these params (socket
    echo: the round trip), else the spec's primary metric."""
    return plugin(workload).primary(params) or primary_metric
