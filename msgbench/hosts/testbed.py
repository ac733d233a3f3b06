"""Hosts on one machine, for trying --hosts and for its tests: network namespaces on one
bridge (a LAN), each running its own OpenSSH server on a key made for the occasion.

    python -m msgbench.hosts.testbed up DIR [--hosts 3] [--rate 1gbit]   # prints DIR/hosts.toml
    python -m msgbench.hosts.testbed down DIR

`up` writes into DIR: the private key, an ssh_config naming the hosts h1, h2, ...
(host-key checking on, against a known_hosts file of their keys), and hosts.toml for
`msgbench run --hosts`, each host deploying into DIR/<host>. `down` kills the sshds and
every process left in the namespaces, and removes the namespaces and the bridge. Needs
root, ip (iproute2), tc, /usr/sbin/sshd (openssh-server) and ssh-keygen. --rate limits
every host's link in both directions with tc tbf (this kernel may lack sch_netem; a
token bucket is a bandwidth limit, no added delay).
"""

import argparse
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

SSHD = "/usr/sbin/sshd"
PREFIX = "mbhost"
STATE = "testbed.json"


class TestbedError(RuntimeError):
    pass


@dataclass
class Testbed:
    dir: Path
    tag: str
    hosts: dict[str, str]  # alias -> address
    bridge: str
    harness_address: str

    @property
    def ssh_config(self) -> Path:
        return self.dir / "ssh_config"

    @property
    def inventory(self) -> Path:
        return self.dir / "hosts.toml"

    def namespace(self, alias: str) -> str:
        return f"{PREFIX}{self.tag}-{alias}"

    def pids(self, alias: str) -> list[int]:
        """Every process in the host's namespace."""
        out = _run("ip", "netns", "pids", self.namespace(alias), check=False).stdout
        return [int(p) for p in out.split()]

    def sshd_pid(self, alias: str) -> int | None:
        try:
            return int((self.dir / f"sshd-{alias}.pid").read_text())
        except (OSError, ValueError):
            return None

    def commands(self, alias: str) -> dict[int, str]:
        """pid -> command line of what runs in the host's namespace, its sshd listener and
        sessions (closing down) aside."""
        found = {}
        for pid in self.pids(alias):
            if pid == self.sshd_pid(alias):
                continue
            try:
                found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
            except OSError:  # it ended meanwhile
                continue
        return {pid: cmd for pid, cmd in found.items() if not cmd.startswith("sshd:")}

    def processes(self, alias: str) -> list[str]:
        return list(self.commands(alias).values())


def _run(*argv: str, check: bool = True, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False, **kw)
    if check and proc.returncode != 0:
        raise TestbedError(f"`{' '.join(argv)}` failed: {(proc.stderr or proc.stdout).strip()}")
    return proc


def _ns(ns: str, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return _run("ip", "netns", "exec", ns, *argv, check=check)


SSHD_CONFIG = """ListenAddress {address}
Port 22
HostKey {dir}/host_key_{alias}
AuthorizedKeysFile {dir}/authorized_keys
PidFile {dir}/sshd-{alias}.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
MaxSessions 64
MaxStartups 64
"""

CLIENT_CONFIG = """Host {alias}
  HostName {address}
  User {user}
  IdentityFile {dir}/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile {dir}/known_hosts
  StrictHostKeyChecking yes
"""


def up(directory: Path, count: int = 3, rate: str | None = None) -> Testbed:
    if os.geteuid() != 0:
        raise TestbedError("the testbed needs root (network namespaces and sshd)")
    if not os.path.exists(SSHD):
        raise TestbedError(f"{SSHD} is missing: apt-get install -y openssh-server")
    directory.mkdir(parents=True, exist_ok=True)
    os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # sshd's privilege separation directory
    tag = str(os.getpid() % 100000)
    net = _free_subnet(os.getpid() % 250)
    bed = Testbed(dir=directory, tag=tag, hosts={}, bridge=f"mbbr{tag}", harness_address=f"{net}.1")
    _save(bed)  # before anything exists, so that down() finds whatever up() made
    try:
        _run("ip", "link", "add", bed.bridge, "type", "bridge")
        _run("ip", "addr", "add", f"{bed.harness_address}/24", "dev", bed.bridge)
        _run("ip", "link", "set", bed.bridge, "up")
        _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(directory / "id_ed25519"))
        shutil.copy(directory / "id_ed25519.pub", directory / "authorized_keys")
        known, config = [], []
        user = os.environ.get("USER") or "root"
        for i in range(1, count + 1):
            alias, address = f"h{i}", f"{net}.{10 + i}"
            bed.hosts[alias] = address
            _save(bed)
            _link(bed, alias, address, rate)
            key = directory / f"host_key_{alias}"
            _run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key))
            known.append(f"{address} {(key.with_suffix('.pub')).read_text().strip()}")
            (directory / f"sshd_config_{alias}").write_text(
                SSHD_CONFIG.format(address=address, dir=directory, alias=alias))
            config.append(CLIENT_CONFIG.format(alias=alias, address=address, dir=directory, user=user))
            (directory / alias).mkdir(exist_ok=True)
            _ns(bed.namespace(alias), SSHD, "-f", str(directory / f"sshd_config_{alias}"),
                "-E", str(directory / f"sshd-{alias}.log"))  # it daemonises once it listens
        (directory / "known_hosts").write_text("\n".join(known) + "\n")
        bed.ssh_config.write_text("\n".join(config))
        bed.inventory.write_text(_inventory(bed))
        for alias in bed.hosts:
            _wait_ssh(bed, alias)
    except BaseException:
        down(directory)
        raise
    return bed


def _free_subnet(start: int) -> str:
    """A 10.215.X /24 no interface here has yet (another testbed may be up)."""
    taken = _run("ip", "-4", "-o", "addr", "show", check=False).stdout
    for i in range(250):
        net = f"10.215.{(start + i) % 250}"
        if f" {net}." not in taken:
            return net
    raise TestbedError("no free 10.215.X.0/24 subnet for the testbed's bridge")


def _link(bed: Testbed, alias: str, address: str, rate: str | None) -> None:
    ns, outside, inside = bed.namespace(alias), f"mbv{bed.tag}{alias}", f"mbi{bed.tag}{alias}"
    _run("ip", "netns", "add", ns)
    _run("ip", "link", "add", outside, "type", "veth", "peer", "name", inside)
    _run("ip", "link", "set", inside, "netns", ns)
    _run("ip", "link", "set", outside, "master", bed.bridge)
    _run("ip", "link", "set", outside, "up")
    _ns(ns, "ip", "addr", "add", f"{address}/24", "dev", inside)
    _ns(ns, "ip", "link", "set", inside, "up")
    _ns(ns, "ip", "link", "set", "lo", "up")
    if rate:  # both directions: what leaves the host, and what the bridge sends it
        shape = ["root", "tbf", "rate", rate, "burst", "256kb", "latency", "20ms"]
        _run("tc", "qdisc", "add", "dev", outside, *shape)
        _ns(ns, "tc", "qdisc", "add", "dev", inside, *shape)


def _inventory(bed: Testbed) -> str:
    lines = ["# Written by python -m msgbench.hosts.testbed: hosts in network namespaces on this machine.",
             f'ssh_config = "{bed.ssh_config}"',
             "# The hosts share this machine's files: the sources' host reaches the receivers' with it too.",
             f'hosts_ssh_config = "{bed.ssh_config}"', ""]
    for alias in bed.hosts:
        lines += [f"[hosts.{alias}]", f'dir = "{bed.dir / alias}"', 'deploy = "rsync"', ""]
    return "\n".join(lines)


def _wait_ssh(bed: Testbed, alias: str, limit_s: float = 20.0) -> None:
    deadline = time.monotonic() + limit_s
    while True:
        proc = _run("ssh", "-F", str(bed.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=5",
                    alias, "true", check=False)
        if proc.returncode == 0:
            return
        if time.monotonic() > deadline:
            raise TestbedError(f"sshd on {alias} does not answer: {proc.stderr.strip()}")
        time.sleep(0.2)


def _save(bed: Testbed) -> None:
    (bed.dir / STATE).write_text(json.dumps({"tag": bed.tag, "hosts": bed.hosts, "bridge": bed.bridge,
                                             "harness_address": bed.harness_address}))


def load(directory: Path) -> Testbed:
    state = json.loads((directory / STATE).read_text())
    return Testbed(dir=directory, **state)


def down(directory: Path) -> None:
    """Kill everything in the namespaces (sshd included), then remove them and the bridge."""
    try:
        bed = load(directory)
    except (OSError, ValueError):
        return
    for alias in bed.hosts:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = bed.pids(alias)
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + 2.0
            while bed.pids(alias) and time.monotonic() < deadline:
                time.sleep(0.05)
        _run("ip", "link", "del", f"mbv{bed.tag}{alias}", check=False)
        _run("ip", "netns", "del", bed.namespace(alias), check=False)
    _run("ip", "link", "del", bed.bridge, check=False)
    (directory / STATE).unlink(missing_ok=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m msgbench.hosts.testbed", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("up", help="make the hosts; prints the inventory's path")
    p.add_argument("dir", type=Path)
    p.add_argument("--hosts", type=int, default=3, choices=range(1, 10), metavar="N")
    p.add_argument("--rate", help="limit each host's link with tc tbf, e.g. 1gbit or 10mbit")
    p = sub.add_parser("down", help="kill what runs there and remove the hosts")
    p.add_argument("dir", type=Path)
    args = parser.parse_args(argv)
    try:
        if args.command == "up":
            print(up(args.dir.resolve(), args.hosts, args.rate).inventory)
        else:
            down(args.dir.resolve())
    except TestbedError as exc:
        print(f"msgbench.hosts.testbed: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
