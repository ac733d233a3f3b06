"""The workloads' view-side plug-ins: one registry, one Plugin per workload (plugin.py).

Adding a workload: spec/workloads/<name>.json, and, only if its views need more than
the spec states, msgbench/views/workloads/<name>.py with a PLUGIN listed below (what it
needs to run is msgbench/running/workloads/).
"""

from msgbench.views.workloads import chat, fanin, pubsub, ring, socket
from msgbench.views.workloads.plugin import Plugin

__all__ = ["PLUGINS", "Plugin", "order", "plugin"]

PLUGINS: dict[str, Plugin] = {p.name: p for p in (
    ring.PLUGIN, fanin.PLUGIN, socket.PLUGIN, pubsub.PLUGIN, chat.PLUGIN)}


def plugin(workload: str) -> Plugin:
    """The workload's plug-in; the generic one for a workload with no module."""
    return PLUGINS.get(workload) or Plugin(name=workload)


def order(workloads) -> list[str]:
    """Workload names in section order: the plug-ins' order, then by name."""
    return sorted(workloads, key=lambda w: (plugin(w).order, w))

