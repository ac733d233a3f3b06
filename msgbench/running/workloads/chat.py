"""chat (seed 003), the run side: its server kind (server=ws; docs/chat-server.md).

A server=ws point measures the target's chat server through the one load generator
(kits/chatload) that the harness starts in place of the target's worker
(msgbench/workers/chat_server.py); with --place, its server and its load generators run on
other hosts (msgbench/hosts/chat_split.py). The runner reaches both only through this plug-in.
"""

from msgbench.hosts import chat_split
from msgbench.hosts.placement import PEER, WORKER
from msgbench.running.workloads.plugin import RunPlugin, ServerKind
from msgbench.workers import chat_server


def serves(params: dict) -> bool:
    return chat_server.is_server_kind("chat", params)


def refusal(target) -> str | None:
    if chat_server.command(target):
        return None
    return (f"target {target.label} declares no chat server (chat_server in its target.toml): "
            f"it cannot run chat with server=ws")


def worker_command(job) -> tuple:
    """The load generator's argv and folder; its variant env and args are the server's alone."""
    argv, cwd = chat_server.worker_argv()
    return argv, cwd, job.target.build_env()


def check_place(jobs: list, place: dict) -> str | None:
    """Chat's roles are the server kind's (server=ws): the in-process kinds are one
    process; each load generator owns whole groups, so there are at least as many."""
    placed = sorted(r for r in ("server", "clients") if r in place)
    chats = [j for j in jobs if j.scenario.workload == "chat"]
    if not placed or not chats:
        return None
    if any(not serves(j.params) for j in chats):
        return (f"--place {','.join(placed)}: chat's roles are the chat server kind's; give -p server=ws "
                "(the in-process kinds run in one process on one host)")
    generators = len(place.get("clients", [])) or 1
    few = min(int(j.params["groups"]) for j in chats)
    if few < generators:
        return (f"--place clients={','.join(place['clients'])}: {generators} load generators each "
                f"own whole groups, and a point has groups={few}; give groups >= {generators}")
    return None


SERVER_KIND = ServerKind(
    applies=serves,
    refusal=refusal,
    variants=chat_server.serving_variants,
    fit_problem=chat_server.fit_problem,
    worker_command=worker_command,
    limits=chat_server.raised_fd_limit,
    check_hosts=chat_split.check_hosts,
    peer_env=chat_server.peer_env,
    generator_role="clients",
    generator_dir=chat_server.LOAD_GENERATOR_DIR,
    measure_placed=chat_split.measure,
    build=chat_server.build_load_generator,
    build_text=f"build the chat load generator: make build in {chat_server.LOAD_GENERATOR_DIR}",
    errors=(chat_split.SplitError,),
)

# The server kind places its server (the peer its load generator starts) and its clients
# (the load generator, the worker): one load generator on each clients host, owning
# whole groups (chat_split.py).
PLUGIN = RunPlugin(name="chat", check_place=check_place, server_kind=SERVER_KIND,
                   target_keys=chat_server.TARGET_KEYS, check_target=chat_server.target_problem,
                   roles={"server": PEER, "clients": WORKER},
                   spread={"clients": "the chat server kind's load generators"})
