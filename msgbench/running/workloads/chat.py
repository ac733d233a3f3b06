"""chat (seed 003), the run side: its server kind (server=ws; docs/chat-server.md).

A server=ws point measures the target's chat server through the one load generator
(kits/chatload) that the harness starts in place of the target's worker
(msgbench/workers/chat_server.py); with --place, its server and its load generators run on
other hosts (msgbench/hosts/chat_split.py). The runner reaches both only through this plug-in,
as `msgbench capacity` reaches its two load axes (users, rate).
"""

from dataclasses import dataclass

from msgbench.core import spec
from msgbench.hosts import chat_split
from msgbench.hosts.placement import PEER, WORKER
from msgbench.running.capacity_axis import Axis, AxisError
from msgbench.running.workloads.plugin import RunPlugin, ServerKind
from msgbench.workers import chat_server, sysinfo


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

# The chat server kind's realistic load: 10 users a group, each sending every 5 s, for 30 s
# (6 messages a user, so that even 100 users give the p99 600 samples).
SERVER_LOAD = {"server": "ws", "think_ms": 5000, "clients_per_group": 10, "duration_s": 30}


@dataclass(frozen=True)
class ChatUsers(Axis):
    """The chat server kind's users (groups x clients_per_group), each sending every think_ms."""

    def params_for(self, load, base):
        return base | {"groups": max(1, round(load / base["clients_per_group"]))}

    def load_of(self, params):
        return float(chat_server.users(params))

    def achieved(self, metrics, params):
        ratio = metrics.get("achieved_send_ratio")
        return None if ratio is None else ratio * self.load_of(params)

    def defaults(self):
        return dict(SERVER_LOAD)

    def quantize(self, base):
        per_group = base["clients_per_group"]
        return lambda load: max(1, round(load / per_group)) * per_group

    def default_start(self, base):
        return float(base["clients_per_group"] * 10)

    def machine_limit(self, base, target, headroom):
        """The most users whose sockets fit the descriptors and memory (chat_server.fit_problem)."""
        memory = sysinfo.meminfo().get("MemTotal", 0)

        def fits(groups: int) -> bool:
            return chat_server.fit_problem(target, base | {"groups": groups}, memory, headroom) is None

        lo, hi = 1, int(spec.workload("chat").params["groups"]["maximum"])
        if fits(hi):
            return None, ""
        if not fits(lo):
            return 0.0, chat_server.fit_problem(target, base | {"groups": lo}, memory, headroom)
        while hi - lo > 1:
            middle = (lo + hi) // 2
            lo, hi = (middle, hi) if fits(middle) else (lo, middle)
        why = chat_server.fit_problem(target, base | {"groups": hi}, memory, headroom)
        return float(lo * base["clients_per_group"]), why

    def checked(self, base):
        if "groups" in base:
            raise AxisError(f"-p groups={base['groups']}: the users search sets groups itself "
                            "(users = groups x clients_per_group); give where it starts with --start")
        if base.get("think_ms", 0) <= 0:
            raise AxisError(f"-p think_ms={base.get('think_ms')}: users are held at a think time; "
                            "give think_ms > 0 (the seed's realistic 5000)")
        return base


@dataclass(frozen=True)
class ChatRate(Axis):
    """The chat server kind's message rate at a fixed number of users: think_ms set to
    users x 1000 / rate (whole ms, so the rates the search can ask for are quantized)."""

    def _users(self, base):
        return chat_server.users(base)

    def params_for(self, load, base):
        return base | {"think_ms": max(1, round(self._users(base) * 1000 / load))}

    def load_of(self, params):
        return self._users(params) * 1000 / params["think_ms"]

    def achieved(self, metrics, params):
        return metrics.get("sent_per_s")

    def quantize(self, base):
        return lambda load: self.load_of(self.params_for(load, base))

    def defaults(self):
        return {k: v for k, v in SERVER_LOAD.items() if k != "think_ms"}  # the axis sets it

    def default_start(self, base):
        return self._users(base) / 5  # every user once in 5 s: the seed's realistic think time

    def checked(self, base):
        if "think_ms" in base:
            raise AxisError(f"-p think_ms={base['think_ms']}: the rate search sets think_ms itself "
                            "(users x 1000 / rate); give where it starts with --start")
        return base


# The server kind places its server (the peer its load generator starts) and its clients
# (the load generator, the worker): one load generator on each clients host, owning
# whole groups (chat_split.py).
PLUGIN = RunPlugin(name="chat", check_place=check_place, server_kind=SERVER_KIND,
                   capacity_axes=(ChatUsers("chat", "users", "users"), ChatRate("chat", "rate", "msg/s")),
                   target_keys=chat_server.TARGET_KEYS, check_target=chat_server.target_problem,
                   roles={"server": PEER, "clients": WORKER},
                   spread={"clients": "the chat server kind's load generators"})
