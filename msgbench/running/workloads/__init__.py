"""The workloads' run-side plug-ins: one registry, one RunPlugin per workload (plugin.py).

The runner, the plan and the command line ask this registry for whatever a workload
does beyond its spec when it is planned and measured; none of them names a workload.
Adding a workload: spec/workloads/<name>.json, and, only if planning or measuring it
needs more than the spec states, msgbench/running/workloads/<name>.py with a PLUGIN listed
below (what its views need is msgbench/views/workloads/).
"""

from msgbench.running.workloads import chat, fanin, pubsub, socket
from msgbench.running.workloads.plugin import RunPlugin, ServerKind

__all__ = ["PLUGINS", "RunPlugin", "ServerKind", "check_hosts", "errors", "plugin", "roles", "server_kind",
           "server_kinds", "spread_roles", "target_problems"]

PLUGINS: dict[str, RunPlugin] = {p.name: p for p in (fanin.PLUGIN, socket.PLUGIN, pubsub.PLUGIN, chat.PLUGIN)}


def plugin(workload: str) -> RunPlugin:
    """The workload's run-side plug-in; the generic one for a workload with no module."""
    return PLUGINS.get(workload) or RunPlugin(name=workload)


def server_kind(workload: str, params: dict) -> ServerKind | None:
    """The server kind a point with these params is of (chat with server=ws), or None."""
    kind = plugin(workload).server_kind
    return kind if kind and kind.applies(params) else None


def server_kinds() -> list[ServerKind]:
    """Every workload's server kind, each once."""
    return [p.server_kind for p in PLUGINS.values() if p.server_kind]


def errors() -> tuple[type[Exception], ...]:
    """What the server kinds' placed runs raise, besides placement's and hosts' errors."""
    return tuple(e for kind in server_kinds() for e in kind.errors)


def roles(workloads) -> dict[str, dict[str, str]]:
    """Each workload's roles that --place may put on hosts: workload -> role -> kind."""
    return {w: dict(plugin(w).roles) for w in workloads}


def spread_roles() -> dict[str, str]:
    """The roles that take several hosts, each with what runs on each of its hosts."""
    return {role: why for p in PLUGINS.values() for role, why in p.spread.items()}


def check_hosts(jobs: list, peers) -> list[str]:
    """Each workload's rules for its jobs across the placed hosts (placement.Peers calls
    this once the hosts are reached); raises placement.PlacementError; the notes to keep."""
    notes = []
    for workload in sorted({j.scenario.workload for j in jobs}):
        notes += plugin(workload).check_hosts([j for j in jobs if j.scenario.workload == workload], peers)
    return notes


def target_problems(target) -> list[str]:
    """What is wrong in a target.toml with the keys the workload plug-ins own: a key no
    registry reads (a misspelling), and each plug-in's own check of its keys. A build
    from another checkout (builds.py) runs that checkout's target.toml as its own
    registry read it: keys this one no longer knows (an old `test`, `lint`) are not its
    errors there, so only the plug-ins' checks apply."""
    owned = {key: p.name for p in PLUGINS.values() for key in p.target_keys}
    elsewhere = bool(getattr(target.build_of, "checkout", ""))
    problems = [] if elsewhere else [
        f"{target.folder / 'target.toml'}: unknown key {key!r}; the workload plug-ins' keys are "
        f"{', '.join(sorted(owned)) or 'none'} (docs/targets.md)" for key in target.extra if key not in owned]
    for p in PLUGINS.values():
        if p.target_keys and any(key in target.extra for key in p.target_keys):
            problem = p.check_target(target)
            if problem:
                problems.append(problem)
    return problems
