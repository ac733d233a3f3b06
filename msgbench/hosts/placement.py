"""Where each role of a run is placed: here, in a namespace, or on hosts over ssh.

Roles are a workload's parts: socket's server half, pubsub's broker, sources
and receivers, a server kind's server and clients (msgbench/running/workloads: the
runner hands Peers the plug-ins' server kinds, so that placement names none). Each is one of three kinds:
the worker itself (it is started on its host over ssh), the worker's peer (the harness
hands the worker a peer command that starts it over ssh: MSGBENCH_PEER_COMMAND), or a
service (a broker, started on its host by services.py). `--place role=host` maps roles
to hosts of the inventory (`--hosts`, msgbench/hosts/inventory.py); unplaced roles stay here, as
does everything without --place.

Before --hosts:
placement=local runs the server on this host over loopback. placement=remote runs it on
another host: a real one reached with ssh (`--remote user@host`), which must have the
target installed at the same path (or `--remote-dir`), or, on one machine, a host that
msgbench makes itself: a network namespace joined to this one by a veth pair. The
namespace is created before the first measurement and removed after the last, also
when the run fails or is interrupted; namespaces left by a crashed run are removed
first. Creating one needs root.
"""

import json
import os
import re
import shlex
import subprocess
from dataclasses import dataclass

from msgbench.core import interrupts
from msgbench.hosts import inventory as hosts
from msgbench.workers import procs
from msgbench.workers.targets import Target, Variant

NAMESPACE_PREFIX = "msgbench-"
LOCALHOST = "127.0.0.1"


class PlacementError(RuntimeError):
    pass


# What a role is: each workload's run-side plug-in names its roles with these
# (msgbench/running/workloads: RunPlugin.roles, .spread), and the runner hands them here.
WORKER, PEER, SERVICE = "worker", "peer", "service"


def parse_place(text: str) -> dict[str, list[str]]:
    """--place broker=h1,sources=h2,receivers=h3 (a name without = adds a host to the
    role before it: server=h1,clients=h2,h3)."""
    place: dict[str, list[str]] = {}
    role = None
    for item in (i.strip() for i in text.split(",")):
        name, sep, host = item.partition("=")
        if sep:
            role, item = name.strip(), host.strip()
            if not role or role in place:
                raise PlacementError(f"--place {text!r}: {'a role is named twice' if role else 'a role is missing'}; "
                                     "give ROLE=HOST[,HOST...] once per role, e.g. broker=h1,sources=h2")
            place[role] = []
        if role is None or not item:
            raise PlacementError(f"--place {text!r} is not ROLE=HOST[,HOST...], e.g. broker=h1,sources=h2,receivers=h3")
        place[role].append(item)
    return place


def check_roles(place: dict[str, list[str]], roles: dict[str, dict[str, str]], inventory,
                spread: dict[str, str]) -> None:
    """Every placed role exists in some workload of the run (roles: workload -> role ->
    kind), on one known host unless it is a role that spreads (spread: role -> what runs
    on each of its hosts)."""
    known = {role for wl_roles in roles.values() for role in wl_roles}
    for role, names in place.items():
        if role not in known:
            offered = ", ".join(f"{wl}: {', '.join(roles[wl])}" for wl in sorted(roles) if roles[wl])
            raise PlacementError(f"--place {role}=...: no workload of this run has a role {role!r}; "
                                 f"roles are {offered or 'none (this workload runs on one host)'}")
        if len(names) > 1 and role not in spread:
            several = ", ".join(f"{r} ({why})" for r, why in spread.items()) or "none"
            raise PlacementError(f"--place {role}={','.join(names)}: role {role} runs on one host; only "
                                 f"{several} take several (docs/hosts.md)")
        if len(set(names)) < len(names):
            raise PlacementError(f"--place {role}={','.join(names)}: a host is named twice")
        for name in names:
            if name != hosts.LOCAL:
                if inventory is None:
                    raise PlacementError(f"--place {role}={name} needs --hosts FILE naming host {name}")
                try:
                    inventory.host(name)
                except hosts.HostError as exc:
                    raise PlacementError(str(exc)) from None


@dataclass
class Namespace:
    name: str
    host_side: str
    host_address: str
    peer_address: str


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)
    if check and proc.returncode != 0:
        raise PlacementError(f"`ip {' '.join(args)}` failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc


def leftover_namespaces() -> list[str]:
    """Namespaces of msgbench runs whose harness process is gone."""
    listing = _ip("netns", "list", check=False).stdout
    found = []
    for line in listing.splitlines():
        name = line.split()[0] if line.split() else ""
        match = re.fullmatch(re.escape(NAMESPACE_PREFIX) + r"(\d+)", name)
        if match and not os.path.exists(f"/proc/{match.group(1)}"):
            found.append(name)
    return found


def create_namespace(netem: str | None = None) -> Namespace:
    if os.geteuid() != 0:
        raise PlacementError(
            "placement=remote on one machine needs root to create a network namespace: "
            "run msgbench as root, or give a real host with --remote user@host"
        )
    pid = os.getpid()
    name = f"{NAMESPACE_PREFIX}{pid}"
    subnet = f"10.213.{(pid >> 6) & 255}.{(pid & 63) * 4}"
    base = subnet.rsplit(".", 1)
    host_address, peer_address = f"{base[0]}.{int(base[1]) + 1}", f"{base[0]}.{int(base[1]) + 2}"
    host_side, peer_side = f"mbh{pid}", f"mbp{pid}"
    _ip("netns", "add", name)
    ns = Namespace(name=name, host_side=host_side, host_address=host_address, peer_address=peer_address)
    try:
        _ip("link", "add", host_side, "type", "veth", "peer", "name", peer_side)
        _ip("link", "set", peer_side, "netns", name)
        _ip("addr", "add", f"{host_address}/30", "dev", host_side)
        _ip("link", "set", host_side, "up")
        _ip("netns", "exec", name, "ip", "addr", "add", f"{peer_address}/30", "dev", peer_side)
        _ip("netns", "exec", name, "ip", "link", "set", peer_side, "up")
        _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
        if netem:
            _add_netem(host_side, netem)
    except BaseException:
        remove_namespace(ns)
        raise
    return ns


def _add_netem(device: str, netem: str) -> None:
    proc = subprocess.run(["tc", "qdisc", "add", "dev", device, "root", "netem", *shlex.split(netem)],
                          capture_output=True, text=True, timeout=30, check=False)
    words = shlex.split(netem)
    if proc.returncode != 0 and "unknown" in proc.stderr.lower() and len(words) == 2 and words[0] == "rate":
        # No sch_netem in this kernel: a rate alone is a token bucket's business (tbf).
        proc = subprocess.run(["tc", "qdisc", "add", "dev", device, "root", "tbf", "rate", words[1],
                               "burst", "256kb", "latency", "20ms"],
                              capture_output=True, text=True, timeout=30, check=False)
    if proc.returncode != 0:
        raise PlacementError(
            f"cannot add netem {netem!r} to {device}: {proc.stderr.strip()} "
            "(is the kernel's sch_netem module available? `modprobe sch_netem`; without it, "
            "--netem 'rate R' alone is applied with tc tbf)"
        )


def remove_namespace(ns: Namespace) -> None:
    _ip("link", "del", ns.host_side, check=False)  # takes its peer in the namespace along
    _ip("netns", "del", ns.name, check=False)


class Peers:
    """The environment that tells a peer workload's worker where to start its server.

    Used as a context manager around a run: a namespace is made only when some job
    needs remote placement and no real remote host was given.
    """

    def __init__(self, jobs, remote: str | None = None, remote_dir: str | None = None,
                 netem: str | None = None, notes: list[str] | None = None,
                 inventory: "hosts.Inventory | None" = None, place: dict[str, list[str]] | None = None,
                 roles: dict[str, dict[str, str]] | None = None, server_kind=None, check_hosts=None):
        self.remote, self.remote_dir, self.netem = remote, remote_dir, netem
        self.inventory, self.place = inventory, dict(place or {})
        self.jobs = jobs
        self.roles = roles or {}  # workload -> role -> WORKER, PEER or SERVICE (check_roles)
        # server_kind(workload, params): the workload plug-ins' server kind a point is of
        # (msgbench/running/workloads), or None; its load generator is started in place of
        # the worker and starts the target's server as its peer.
        self.server_kind = server_kind or (lambda workload, params: None)
        # check_hosts(jobs, peers): the workloads' rules across the hosts once they are
        # reached (pubsub's one clock); raises PlacementError, returns notes.
        self.check_hosts = check_hosts or (lambda jobs, peers: [])
        self.needs_namespace = not remote and not inventory and any(_placement(j) == "remote" for j in jobs)
        self.namespace: Namespace | None = None
        self.notes = notes if notes is not None else []
        self.ssh: hosts.Ssh | None = None
        self.facts: dict[str, dict] = {}  # alias -> the host's metadata, stored with the run

    def hosts_of(self, role: str) -> "list[hosts.Host | None]":
        """The hosts a role is placed on (None: here); [] when it is not placed."""
        return [None if n == hosts.LOCAL else self.inventory.host(n) for n in self.place.get(role, [])]

    def server_kind_placed(self, job, params: dict) -> bool:
        """A server kind's job with some of its roles placed: its plug-in runs it split over
        the hosts (the chat server kind: chat_split.py)."""
        return self.server_kind(job.scenario.workload, params) is not None and any(
            r in self.place for r in self.roles.get(job.scenario.workload, {}))

    def host_of(self, role: str) -> "hosts.Host | None":
        """The host a role is placed on; None: here."""
        names = self.place.get(role)
        if not names or names[0] == hosts.LOCAL:
            return None
        return self.inventory.host(names[0])

    def __enter__(self) -> "Peers":
        if self.inventory and any(n != hosts.LOCAL for names in self.place.values() for n in names):
            try:
                self._open_hosts()
            except BaseException:
                self.__exit__(None, None, None)
                raise
        if not self.needs_namespace:
            return self
        try:
            for name in leftover_namespaces():
                _ip("netns", "del", name, check=False)
                self.notes.append(f"removed network namespace {name}, left over from an earlier run")
            with interrupts.deferred():  # held the moment it exists, so it is removed on any path
                self.namespace = create_namespace(self.netem)
        except BaseException:  # __exit__ does not run when __enter__ raises
            self.__exit__(None, None, None)
            raise
        self.notes.append(
            f"placement=remote: the server ran in network namespace {self.namespace.name} "
            f"({self.namespace.peer_address}, over a veth pair{', netem ' + self.netem if self.netem else ''})"
        )
        return self

    def _open_hosts(self) -> None:
        """Reach every placed host, store its facts, deploy the targets where a worker or
        a peer runs, and check each can run there (its version command)."""
        with interrupts.deferred():
            self.ssh = hosts.Ssh(self.inventory)
        used = {n for names in self.place.values() for n in names if n != hosts.LOCAL}
        for alias in sorted(used):
            host = self.inventory.host(alias)
            try:
                hosts.resolve(self.ssh, host)
                self.facts[alias] = hosts.facts(self.ssh, host) | hosts.clock_offset(self.ssh, host)
            except hosts.HostError as exc:
                raise PlacementError(str(exc)) from None
        for role, names in self.place.items():
            self.notes.append(f"role {role} ran on {', '.join(self._where(n) for n in names)}")
        self.notes += self.check_hosts(self.jobs, self)
        # alias -> the target folders that run there; alias -> the load generators' folders
        running, generators = {}, {}
        for job in self.jobs:
            served = self.server_kind_placed(job, job.params) and self.server_kind(job.scenario.workload, job.params)
            for role, kind in self.roles.get(job.scenario.workload, {}).items():
                for host in self.hosts_of(role) if kind in (WORKER, PEER) else []:
                    if host and served and role == served.generator_role:  # its load generator, not the target
                        generators.setdefault(host.alias, set()).add(served.generator_dir)
                    elif host:
                        running.setdefault(host.alias, {})[job.target.label] = job.target
        for alias in sorted(set(running) | set(generators)):
            chosen = running.get(alias, {})
            host = self.inventory.host(alias)
            folders = [t.folder for t in chosen.values()]
            folders += sorted(generators.get(alias, ()))
            try:
                self.notes.append("deployed " + hosts.deploy(self.ssh, host, folders))
                for t in chosen.values():
                    if t.version:
                        version = hosts.check_command(self.ssh, host, t.version, host.folder(t.folder),
                                                      f"target {t.label} (its runtime or build is missing there)")
                        self.facts[alias].setdefault("runtimes", {})[t.label] = version
            except hosts.HostError as exc:
                raise PlacementError(str(exc)) from None

    def boot_id(self, host: "hosts.Host | None") -> str | None:
        """The kernel a host runs (its boot id; None: here), read when it was reached: one
        boot id is one CLOCK_MONOTONIC (this machine, its namespaces and containers)."""
        return procs.boot_id() if host is None else self.facts[host.alias].get("boot_id")

    def _where(self, name: str) -> str:
        if name == hosts.LOCAL:
            return "this machine"
        return f"{name} ({self.inventory.host(name).address})"

    def worker(self, job, argv: list[str], env: dict) -> list[str]:
        """The worker's argv: as it is, or over ssh on the host of the workload's worker role."""
        host = self._role_host(job.scenario.workload, WORKER)
        if host is None:
            return argv
        return self.ssh.command(host, argv, cwd=host.folder(job.target.folder), env=hosts.local_env_diff(env),
                                grace_s=2.0)

    def service_host(self) -> "tuple | None":
        """(host, ssh) of the broker role, for services.py; None: here."""
        host = self.host_of("broker") if self.ssh else None
        return (host, self.ssh) if host else None

    def service_address(self) -> str | None:
        """Where a broker started here listens: None (loopback) unless a worker or its peer
        runs on a host (pubsub's sources or receivers placed, the broker not), which must
        reach it: then this machine's address as those hosts see it (their ssh
        connection's source), one address for all of them."""
        if not self.ssh or self.host_of("broker") is not None:
            return None
        placed = sorted({host.alias for roles in self.roles.values() for role, kind in roles.items()
                         if kind in (WORKER, PEER) for host in self.hosts_of(role) if host})
        if not placed:
            return None
        seen = {alias: self.facts.get(alias, {}).get("harness_address") for alias in placed}
        unknown = [alias for alias, address in seen.items() if not address or address == "?"]
        if unknown:
            raise PlacementError(f"host {unknown[0]} did not say which address it sees this machine at "
                                 "(SSH_CONNECTION), so a broker here cannot be reached from it: place the broker "
                                 "on a host too (--place broker=HOST)")
        if len(set(seen.values())) > 1:
            shown = ", ".join(f"{alias} at {address}" for alias, address in seen.items())
            raise PlacementError(f"the hosts see this machine at different addresses ({shown}), and a broker "
                                 "here listens on one: place the broker on a host too (--place broker=HOST)")
        return next(iter(seen.values()))

    def placement_of(self, job) -> dict[str, str]:
        """Which host ran each role of the job's workload, as stored with its measurement
        ({} when nothing is placed): the hosts' aliases, or `local`; a peer left unplaced
        runs beside its worker (env_for), a service here unless placed."""
        roles = self.roles.get(job.scenario.workload, {})
        if not self.ssh or not any(role in self.place for role in roles):
            return {}
        worker = next((role for role, kind in roles.items() if kind == WORKER), None)
        found = {}
        for role, kind in roles.items():
            names = self.place.get(role) or (self.place.get(worker) if kind == PEER and worker else None)
            found[role] = ",".join(names or [hosts.LOCAL])
        return found

    def adopt_remote_usage(self, job, outcome) -> None:
        """A worker on a host: its CPU and peak RSS are what remote.py measured there, not
        the ssh client's; the host is named with the measurement."""
        if outcome.parts:  # a server kind's placed run measured each process where it ran
            outcome.placement = {}
            for part in outcome.parts:
                there = outcome.placement.get(part["role"])
                outcome.placement[part["role"]] = f"{there},{part['host']}" if there else part["host"]
            if any(p["host"] != hosts.LOCAL for p in outcome.parts):
                kind = self.server_kind(job.scenario.workload, job.params)
                outcome.other_cpu_share = None
                outcome.host = ",".join(p["host"] for p in outcome.parts if kind and p["role"] == kind.generator_role)
            return
        outcome.placement = self.placement_of(job) or None
        host = self._role_host(job.scenario.workload, WORKER) if self.ssh else None
        if host is None:
            return
        from msgbench.hosts import remote

        report = remote.parse_report(outcome.stderr_tail) or {}
        outcome.cpu_s, outcome.max_rss_bytes = report.get("cpu_s"), report.get("max_rss_bytes")
        if outcome.status != "ok" and outcome.error:
            lost = "" if report else (": its ssh session ended without the wrapper's report (the host, "
                                      "its sshd or the connection went away)")
            outcome.error = f"on host {host.alias} ({host.address}){lost}: {outcome.error}"
        outcome.other_cpu_share = None  # this machine's load says nothing of the host's
        outcome.host = host.alias

    def _role_host(self, workload: str, kind: str) -> "hosts.Host | None":
        roles = [r for r, k in self.roles.get(workload, {}).items() if k == kind]
        return self.host_of(roles[0]) if roles else None

    def __exit__(self, *exc) -> None:
        if self.ssh:
            with interrupts.deferred():
                self.ssh.close()
                self.ssh = None
        if self.namespace:
            with interrupts.deferred():  # a second Ctrl-C must not leave the namespace behind
                remove_namespace(self.namespace)
                self.namespace = None

    def env_for(self, target: Target, variant: Variant, params: dict, process_limit: int,
                workload: str, peer_env: dict | None = None) -> dict:
        """The worker's MSGBENCH_PEER_* variables. peer_env: what the peer's environment
        sets beyond the harness's (passed to a peer on a host). A workload with a
        `placement` param (socket) puts its peer apart only with placement=remote."""
        kind = self.server_kind(workload, params)
        if kind:  # the load generator starts the server
            return kind.peer_env(target, variant, process_limit, LOCALHOST)
        if not target.serve:
            return {}
        argv = target.serve_argv(variant, process_limit)
        cwd, host = str(target.folder), LOCALHOST
        peer_host = self._role_host(workload, PEER) if self.ssh else None
        worker_host = self._role_host(workload, WORKER) if self.ssh else None
        if worker_host is not None:  # the worker starts its peer there: paths are the host's
            cwd = worker_host.folder(target.folder)
        if peer_host is not None and params.get("placement", "remote") == "remote":
            if worker_host is None:
                cwd = str(target.folder)
            elif worker_host.alias == peer_host.alias:
                peer_host = None  # beside the worker: a plain child of it
            argv_there = argv
            if peer_host is not None:
                # From another host the worker opens its own connection (this machine's
                # master is not there): that host needs ssh access to the peer's (docs/hosts.md).
                # Apart from the sources, brokerless receivers (tcp, zeromq) listen on their
                # host's address rather than loopback (kits/pubsub: MSGBENCH_LISTEN_HOST).
                there_env = (peer_env or {}) | {"MSGBENCH_LISTEN_HOST": peer_host.address}
                argv = self.ssh.command(peer_host, argv_there, cwd=peer_host.folder(target.folder),
                                        env=there_env, multiplex=worker_host is None, grace_s=2.0)
                host = peer_host.address
        elif params.get("placement") == "remote" and not self.inventory:
            if self.remote:
                user_host = self.remote
                host = self._remote_address()
                # The local ssh starts in the target's folder here; --remote-dir is a path
                # there only, which need not exist on this machine.
                there = self.remote_dir or cwd
                argv = ["ssh", "-o", "BatchMode=yes", user_host, "cd", shlex.quote(there), "&&",
                        *map(shlex.quote, argv)]
            elif self.namespace:
                argv = ["ip", "netns", "exec", self.namespace.name, *argv]
                host = self.namespace.peer_address
        return {"MSGBENCH_PEER_COMMAND": json.dumps(argv), "MSGBENCH_PEER_CWD": cwd, "MSGBENCH_PEER_HOST": host}


    def _remote_address(self) -> str:
        """--remote's address as ssh connects to it (an alias of ~/.ssh/config resolved)."""
        if not hasattr(self, "_remote_resolved"):
            try:
                self._remote_resolved = hosts.address_of(self.remote)
            except hosts.HostError as exc:
                raise PlacementError(str(exc)) from None
        return self._remote_resolved


def _placement(job) -> str:
    return job.params.get("placement", "local")
