"""Where the server half of a peer workload runs (socket): here, in a namespace, or over ssh.

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

from msgbench import chat_server, interrupts
from msgbench.targets import Target, Variant

NAMESPACE_PREFIX = "msgbench-"
LOCALHOST = "127.0.0.1"


class PlacementError(RuntimeError):
    pass


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
    if proc.returncode != 0:
        raise PlacementError(
            f"cannot add netem {netem!r} to {device}: {proc.stderr.strip()} "
            "(is the kernel's sch_netem module available? `modprobe sch_netem`)"
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
                 netem: str | None = None, notes: list[str] | None = None):
        self.remote, self.remote_dir, self.netem = remote, remote_dir, netem
        self.needs_namespace = not remote and any(_placement(j) == "remote" for j in jobs)
        self.namespace: Namespace | None = None
        self.notes = notes if notes is not None else []

    def __enter__(self) -> "Peers":
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

    def __exit__(self, *exc) -> None:
        if self.namespace:
            with interrupts.deferred():  # a second Ctrl-C must not leave the namespace behind
                remove_namespace(self.namespace)
                self.namespace = None

    def env_for(self, target: Target, variant: Variant, params: dict, process_limit: int) -> dict:
        if params.get("server") == "ws":  # the chat server kind: the load generator starts the server
            return chat_server.peer_env(target, variant, process_limit, LOCALHOST)
        if not target.serve:
            return {}
        argv = target.serve_argv(variant, process_limit)
        cwd, host = str(target.folder), LOCALHOST
        if params.get("placement") == "remote":
            if self.remote:
                user_host = self.remote
                host = user_host.rsplit("@", 1)[-1]
                cwd = self.remote_dir or cwd
                argv = ["ssh", "-o", "BatchMode=yes", user_host, "cd", shlex.quote(cwd), "&&",
                        *map(shlex.quote, argv)]
            elif self.namespace:
                argv = ["ip", "netns", "exec", self.namespace.name, *argv]
                host = self.namespace.peer_address
        return {"MSGBENCH_PEER_COMMAND": json.dumps(argv), "MSGBENCH_PEER_CWD": cwd, "MSGBENCH_PEER_HOST": host}


def _placement(job) -> str:
    return job.params.get("placement", "local")
