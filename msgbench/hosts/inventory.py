"""Hosts a run's roles are placed on, reached with the user's own OpenSSH (no agent).

An inventory names the hosts: msgbench's TOML (`--hosts hosts.toml`) or an Ansible YAML
inventory. A host is named as the user's ssh config names it; `ssh -G` resolves the
alias to the address the other roles connect to. One multiplexed connection per host
(ControlMaster, in a private directory removed at the end) makes starting a process
there cost milliseconds; BatchMode never prompts; host keys are checked as the user's
ssh config says. Every remote process runs under msgbench/hosts/remote.py, copied to the host's
~/.cache/msgbench at the start of a run: it dies with its ssh session and reports its
CPU and memory.
Targets are deployed with rsync into the host's `dir` (deploy = "rsync"), or the host is
checked to hold the same git revision at `dir` (deploy = "same").
"""

import contextlib
import ctypes
import hashlib
import ipaddress
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from msgbench.core import configfile, tempdirs
from msgbench.core.paths import REPO_ROOT
from msgbench.hosts import remote
from msgbench.workers import sysinfo

LOCAL = "local"
SSH_TIMEOUT_S = 30.0
DEPLOYS = ("rsync", "same")
TEMP_PREFIX = "msgbench-ssh-"


class HostError(RuntimeError):
    """A host that is unknown, unreachable, lacks what it needs, or failed."""


@dataclass
class Host:
    alias: str  # as ssh (and the user's ssh config) names it
    dir: str | None = None  # where the repository's targets are there (default: the same path as here)
    deploy: str = "rsync"
    options: list[str] = field(default_factory=list)  # from an Ansible inventory: -o HostName=..., -l user
    address: str = ""  # what other roles connect to (ssh -G's hostname, as an IP address)
    python: str = "python3"
    wrapper: str = ""  # remote.py's path there, once installed (Ssh.install_wrapper)

    @property
    def root(self) -> str:
        return self.dir or str(REPO_ROOT)

    def folder(self, local_folder: Path) -> str:
        """Where a folder of the repository (a target's) is on this host."""
        resolved = Path(local_folder).resolve()
        if not resolved.is_relative_to(REPO_ROOT):  # a MSGBENCH_TARGETS_DIR or a build elsewhere
            raise HostError(f"target folder {resolved} is outside this checkout ({REPO_ROOT}); hosts take the "
                            "checkout's folders: run from the checkout that holds it, or unset MSGBENCH_TARGETS_DIR")
        return str(Path(self.root) / resolved.relative_to(REPO_ROOT))


@dataclass
class Inventory:
    hosts: dict[str, Host]
    ssh_config: str | None = None  # ssh -F FILE (default: the user's ~/.ssh/config)
    source: str = ""
    # ssh -F FILE for a host's own ssh to another (sources starting receivers): a path on
    # the hosts (default: their users' own ssh config)
    hosts_ssh_config: str | None = None

    def host(self, alias: str) -> Host:
        if alias not in self.hosts:
            raise HostError(f"host {alias!r} is not in the inventory {self.source}; it has: "
                            f"{', '.join(self.hosts) or 'no hosts'}")
        return self.hosts[alias]


def load_inventory(path: Path) -> Inventory:
    """msgbench's TOML ([hosts.NAME] with dir, deploy) or an Ansible YAML inventory; any
    malformed one is a HostError of one line naming the file, the key and what it takes."""
    try:
        text = configfile.read_text(path, "the hosts file")
        if Path(path).suffix in (".yml", ".yaml"):
            return _ansible(text, path)
        return _toml(text, path)
    except configfile.ConfigError as exc:
        raise HostError(str(exc)) from None


def _toml(text: str, path) -> Inventory:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise HostError(f"the hosts file {path} is not TOML ({exc}); give msgbench's TOML or an "
                        "Ansible inventory ending in .yml") from None
    unknown = set(raw) - {"ssh_config", "hosts_ssh_config", "hosts"}
    if unknown:
        raise HostError(f"the hosts file {path} has unknown keys {', '.join(sorted(unknown))}; "
                        "it takes ssh_config, hosts_ssh_config and [hosts.NAME] tables")
    hosts = {}
    for alias, entry in configfile.table(raw.get("hosts"), path, "hosts").items():
        key = f"hosts.{alias}"
        configfile.host_name(alias, path, key)
        extra = set(configfile.table(entry, path, key, empty_ok=False)) - {"dir", "deploy", "python"}
        if extra:
            raise HostError(f"host {alias} in {path} has unknown keys {', '.join(sorted(extra))}; "
                            "a host takes dir, deploy and python")
        hosts[alias] = _host(alias, _optional_text(entry, "dir", path, key),
                             configfile.text(entry.get("deploy", "rsync"), path, f"{key}.deploy"), path,
                             python=configfile.text(entry.get("python", "python3"), path, f"{key}.python"))
    config = _optional_text(raw, "ssh_config", path)
    if config:
        config = str((Path(path).parent / Path(config).expanduser()).resolve())
    return Inventory(hosts=hosts, ssh_config=config, source=str(path),
                     hosts_ssh_config=_optional_text(raw, "hosts_ssh_config", path))


def _optional_text(entry: dict, name: str, path, prefix: str = "") -> str | None:
    value = entry.get(name)
    return None if value is None else configfile.text(value, path, f"{prefix}.{name}" if prefix else name)


def _host(alias, directory, deploy, path, **kw) -> Host:
    if deploy not in DEPLOYS:
        raise HostError(f"host {alias} in {path}: deploy = {deploy!r}; it takes {' or '.join(DEPLOYS)}")
    if alias == LOCAL:
        raise HostError(f"{path}: {LOCAL!r} is this machine, not a host to list")
    return Host(alias=alias, dir=directory, deploy=deploy, **kw)


def _ansible(text: str, path) -> Inventory:
    """An Ansible YAML inventory: every host of every group; ansible_host, ansible_user,
    ansible_port and msgbench_dir / msgbench_deploy as host variables."""
    raw = configfile.load_yaml(text, path, "the Ansible inventory")
    hosts: dict[str, Host] = {}

    def group(body, key: str) -> None:
        body = configfile.table(body, path, key)
        for alias, variables in configfile.table(body.get("hosts"), path, f"{key}.hosts").items():
            where = f"{key}.hosts.{alias}"
            configfile.host_name(alias, path, f"{key}.hosts (a host's name)")
            variables = configfile.table(variables, path, where)
            options = []
            if "ansible_host" in variables:
                address = configfile.host_name(variables["ansible_host"], path, where + ".ansible_host")
                options += ["-o", f"HostName={address}"]
            if "ansible_user" in variables:
                options += ["-l", configfile.host_name(variables["ansible_user"], path, where + ".ansible_user")]
            if "ansible_port" in variables:
                options += ["-p", str(_port(variables["ansible_port"], path, where + ".ansible_port"))]
            hosts[alias] = _host(alias, _optional_text(variables, "msgbench_dir", path, where),
                                 configfile.text(variables.get("msgbench_deploy", "rsync"), path,
                                                 where + ".msgbench_deploy"),
                                 path, options=options,
                                 python=configfile.text(variables.get("ansible_python_interpreter", "python3"),
                                                        path, where + ".ansible_python_interpreter"))
        for name, child in configfile.table(body.get("children"), path, f"{key}.children").items():
            group(child, f"{key}.children.{name}")

    for name, body in configfile.table(raw, path, "the document (groups)").items():
        group(body, str(name))
    return Inventory(hosts=hosts, source=str(path))


def _port(value: object, path, key: str) -> int:
    """A port as Ansible takes it: a number, or text of one."""
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 65535:
        raise configfile.wrong(path, key, "a port number from 1 to 65535", value)
    return value


def _remote_source() -> str:
    return Path(remote.__file__).read_text()


class Ssh:
    """The run's connections: one master per host, a child of the harness that dies with
    it (even by SIGKILL), which every command to that host multiplexes over."""

    def __init__(self, inventory: Inventory):
        self.inventory = inventory
        self.control = str(tempdirs.make(TEMP_PREFIX))
        self.masters: dict[str, subprocess.Popen] = {}

    def __enter__(self) -> "Ssh":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _options(self, host: Host, from_host: bool = False) -> list[str]:
        argv = ["ssh"]
        config = self.inventory.hosts_ssh_config if from_host else self.inventory.ssh_config
        if config:
            argv += ["-F", config]
        return [*argv, "-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5",
                "-o", "ServerAliveCountMax=3", *host.options]

    def base(self, host: Host, multiplex: bool = True) -> list[str]:
        """ssh with the host's options; multiplex: over this run's master (opened on first use),
        else (from another host, where this machine's master is not) a connection of its own."""
        if not multiplex:
            return [*self._options(host, from_host=True), "-o", "ControlMaster=no", "-o", "ControlPath=none"]
        self.open(host)
        return [*self._options(host), "-o", "ControlMaster=no", "-o", f"ControlPath={self._path(host)}"]

    def _path(self, host: Host) -> str:
        return f"{self.control}/{re.sub(r'[^A-Za-z0-9_.-]', '_', host.alias)[:40]}"

    def open(self, host: Host) -> None:
        """The host's master connection; a HostError naming the host if it is unreachable."""
        if host.alias in self.masters and self.masters[host.alias].poll() is None:
            return
        path = self._path(host)
        master = subprocess.Popen(
            [*self._options(host), "-M", "-N", "-o", f"ControlPath={path}", "-o", "ControlPersist=no", host.alias],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True, preexec_fn=_die_with_parent)
        self.masters[host.alias] = master
        deadline = time.monotonic() + SSH_TIMEOUT_S
        while not os.path.exists(path):
            if master.poll() is not None:
                why = master.stderr.read().decode(errors="replace").strip().splitlines()
                del self.masters[host.alias]
                raise HostError(f"host {host.alias} is unreachable over ssh: {why[-1] if why else 'ssh exited'}")
            if time.monotonic() > deadline:
                self._end(master)
                del self.masters[host.alias]
                raise HostError(f"host {host.alias}: ssh did not connect within {SSH_TIMEOUT_S:g} s")
            time.sleep(0.02)

    def command(self, host: Host, argv: list[str], cwd: str | None = None, env: dict | None = None,
                grace_s: float = 5.0, rmdir: str | None = None, multiplex: bool = True,
                stop_on_eof: bool = False, nofile: int | None = None) -> list[str]:
        """The local argv that runs argv on the host under remote.py (it dies with the session;
        stop_on_eof: a server, stopped in order when the ssh's stdin closes)."""
        if not host.wrapper:
            self.install_wrapper(host)
        wrapper = [host.python, "-I", "-S", host.wrapper, "--grace", f"{grace_s:g}"]
        if stop_on_eof:
            wrapper.append("--stop-on-eof")
        if cwd:
            wrapper += ["--cwd", cwd]
        if rmdir:
            wrapper += ["--rmdir", rmdir]
        if nofile:
            wrapper += ["--nofile", str(nofile)]
        for name, value in (env or {}).items():
            wrapper += ["--env", f"{name}={value}"]
        return [*self.base(host, multiplex), "-T", host.alias, "exec " + shlex.join([*wrapper, "--", *argv])]

    def install_wrapper(self, host: Host) -> None:
        """remote.py into ~/.cache/msgbench on the host, named by its content's hash (runs
        of different msgbench versions do not clash); remembered as host.wrapper."""
        source = _remote_source()
        name = f"remote-{hashlib.sha256(source.encode()).hexdigest()[:12]}.py"
        host.wrapper = self.run(host, 'mkdir -p "$HOME/.cache/msgbench" && cd "$HOME/.cache/msgbench" && '
                                      f't=$(mktemp {name}.XXXXXX) && cat > "$t" && mv "$t" {name} && '
                                      f'echo "$PWD/{name}"', stdin=source.encode()).strip()

    def run(self, host: Host, script: str, timeout_s: float = SSH_TIMEOUT_S,
            stdin: bytes | None = None) -> str:
        """A short shell command on the host; its stdout, or a HostError naming the host."""
        try:
            proc = subprocess.run([*self.base(host), "-T", host.alias, script], input=stdin,
                                  capture_output=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            raise HostError(f"host {host.alias}: `{script[:80]}` did not finish within {timeout_s:g} s") from None
        if proc.returncode == 255:
            why = proc.stderr.decode(errors="replace").strip().splitlines()
            raise HostError(f"host {host.alias} is unreachable over ssh: {why[-1] if why else 'ssh exited 255'}")
        if proc.returncode != 0:
            why = (proc.stderr or proc.stdout).decode(errors="replace").strip()
            raise HostError(f"host {host.alias}: `{script[:120]}` failed (exit {proc.returncode}): {why[-400:]}")
        return proc.stdout.decode(errors="replace")

    @staticmethod
    def _end(master: subprocess.Popen) -> None:
        master.terminate()
        try:
            master.wait(timeout=5)
        except subprocess.TimeoutExpired:
            master.kill()
            master.wait()
        if master.stderr:
            master.stderr.close()

    def close(self) -> None:
        for master in self.masters.values():
            self._end(master)
        self.masters.clear()
        shutil.rmtree(self.control, ignore_errors=True)


def remove_leftover_control_dirs() -> list[str]:
    """The control directories of runs whose harness died (SIGKILL leaves them, empty:
    each master removed its socket as it went)."""
    return tempdirs.sweep(TEMP_PREFIX)


def _die_with_parent() -> None:
    """In the master before exec: SIGTERM when the harness dies, even by SIGKILL."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def resolve(ssh: Ssh, host: Host) -> None:
    """The address other roles reach the host at: ssh -G's hostname, looked up here."""
    host.address = address_of(host.alias, ssh._options(host))


def address_of(alias: str, base: list[str] | None = None) -> str:
    """What `ssh -G alias` says to connect to, as an IPv4 address (an alias of the user's
    ssh config is not a DNS name)."""
    proc = subprocess.run([*(base or ["ssh"]), "-G", alias], capture_output=True, text=True, timeout=10,
                          check=False)
    if proc.returncode != 0:
        raise HostError(f"host {alias}: `ssh -G {alias}` failed: {proc.stderr.strip()}")
    name = next((line.split(None, 1)[1] for line in proc.stdout.splitlines()
                 if line.lower().startswith("hostname ")), alias)
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        pass
    try:
        return socket.getaddrinfo(name, None, socket.AF_INET)[0][4][0]
    except OSError as exc:
        raise HostError(f"host {alias}: its ssh HostName {name!r} does not resolve: {exc}") from None


FACTS = r"""
import json, os, platform, sys
def first(path, key, sep=":"):
    try:
        for line in open(path):
            if line.startswith(key):
                return line.split(sep, 1)[1].strip()
    except OSError:
        return None
mem = first("/proc/meminfo", "MemTotal")
def boot_id():
    try:
        return open("/proc/sys/kernel/random/boot_id").read().strip()
    except OSError:
        return None
def nofile_max():
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    try:
        nr_open = int(open("/proc/sys/fs/nr_open").read())
    except (OSError, ValueError):
        nr_open = 0
    return max(nr_open, hard) if os.geteuid() == 0 else hard
print(json.dumps({"host": platform.node(), "cpu_model": first("/proc/cpuinfo", "model name"),
    "cores": os.cpu_count(), "memory_bytes": int(mem.split()[0]) * 1024 if mem else None,
    "kernel": platform.system() + " " + platform.release() + " " + platform.machine(),
    "os": (first("/etc/os-release", "PRETTY_NAME", "=") or "").strip('"') or None,
    "python": platform.python_version(), "load_average": list(os.getloadavg()),
    "harness_address": (os.environ.get("SSH_CONNECTION") or "?").split()[0],
    "nofile_max": nofile_max(), "boot_id": boot_id()}))
"""


def facts(ssh: Ssh, host: Host) -> dict:
    """The host's metadata (CPU, cores, memory, kernel, OS), as the run stores it for here."""
    out = ssh.run(host, shlex.join([host.python, "-I", "-S", "-c", FACTS]))
    try:
        found = json.loads(out)
    except ValueError:
        raise HostError(f"host {host.alias}: its facts did not decode: {out[:200]!r}") from None
    # ssh -G's first line; FACTS does not see it, /proc/cpuinfo's first line names one CPU
    return found | {"alias": host.alias, "address": host.address}


CLOCK = "import sys, time\nfor _ in sys.stdin:\n    print(repr(time.time()), flush=True)\n"
CLOCK_ROUNDS = 10


def clock_offset(ssh: Ssh, host: Host, rounds: int = CLOCK_ROUNDS) -> dict:
    """The host's clock minus this machine's, NTP-style: `rounds` round trips over one ssh
    session to a loop there that answers each line with its time.time(); at the shortest
    round trip, offset = there - (sent + received) / 2, known to within half that round
    trip (the uncertainty, stored beside it)."""
    argv = [*ssh.base(host), "-T", host.alias, shlex.join([host.python, "-I", "-S", "-u", "-c", CLOCK])]
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    best = None
    try:
        for i in range(rounds + 1):  # the first answer waits for Python's start there: not timed
            sent, sent_at = time.monotonic(), time.time()
            proc.stdin.write("\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
            rtt = time.monotonic() - sent
            if not line:
                raise HostError(f"host {host.alias}: its clock could not be read over ssh (the session ended)")
            offset = float(line) - (sent_at + rtt / 2)
            if i and (best is None or rtt < best[0]):
                best = (rtt, offset)
    except (BrokenPipeError, ValueError) as exc:
        raise HostError(f"host {host.alias}: its clock could not be read over ssh: {exc}") from None
    finally:
        with contextlib.suppress(BrokenPipeError):
            proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        proc.stdout.close()
    rtt, offset = best
    return {"clock_offset_s": round(offset, 6), "clock_uncertainty_s": round(rtt / 2, 6), "clock_rounds": rounds}


def deploy(ssh: Ssh, host: Host, folders: list[Path]) -> str:
    """Put the built target folders on the host (rsync), or check it holds the same
    revision (deploy = same). Returns what was done, for the run's notes."""
    if host.deploy == "same":
        here = sysinfo.git_revision()
        there = ssh.run(host, f"git -C {shlex.quote(host.root)} rev-parse HEAD 2>&1 || true").strip()
        if not re.fullmatch(r"[0-9a-f]{40}", there):
            raise HostError(f"host {host.alias}: {host.root} is at revision unknown, not a git checkout there "
                            f"({there.splitlines()[0] if there else 'git said nothing'}); here it is {here}: "
                            "check out and build the same revision there, or use deploy = \"rsync\"")
        if not here.startswith(there[:12]):
            raise HostError(f"host {host.alias}: {host.root} is at revision {there}, here it is "
                            f"{here}: build the same revision there, or use deploy = \"rsync\"")
        dirty = " (this checkout has uncommitted changes: they are not there)" if "dirty" in here else ""
        return f"{host.alias}: same revision {there[:12]} at {host.root}{dirty}"
    ssh.run(host, f"mkdir -p {shlex.quote(host.root)}")
    shell = shlex.join(ssh.base(host))
    for folder in folders:
        destination = host.folder(folder)
        proc = subprocess.run(
            ["rsync", "-a", "--delete", "--mkpath", "-e", shell, f"{Path(folder).resolve()}/",
             f"{host.alias}:{destination}/"],
            capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise HostError(f"host {host.alias}: rsync of {folder} to {destination} failed: "
                            f"{proc.stderr.strip()[-400:]}")
    return f"{host.alias}: rsync of {', '.join(Path(f).name for f in folders)} into {host.root}"


def check_command(ssh: Ssh, host: Host, argv: list[str], cwd: str, what: str) -> str:
    """Run a short command there (a target's version): its first line, or a HostError
    that says the host lacks the runtime."""
    try:
        out = ssh.run(host, f"cd {shlex.quote(cwd)} && {shlex.join(argv)} 2>&1")
    except HostError as exc:
        if "unreachable" in str(exc):
            raise
        raise HostError(f"host {host.alias} cannot run {what}: {exc}") from None
    return (out.strip().splitlines() or [""])[0]


@contextlib.contextmanager
def connected(inventory: Inventory):
    """The run's ssh connections, closed (masters ended, sockets removed) on every path."""
    ssh = Ssh(inventory)
    try:
        yield ssh
    finally:
        ssh.close()


def describe(facts: dict) -> list[tuple[str, str]]:
    """(alias, one line) per host of a run's metadata["hosts"], for show, the report and Markdown."""
    lines = []
    for alias, f in sorted((facts or {}).items()):
        memory = f.get("memory_bytes")
        parts = [f.get("cpu_model"), f"{f.get('cores')} cores",
                 f"{memory / 2**30:.1f} GiB" if isinstance(memory, (int, float)) else None, f.get("kernel")]
        parts += [f"{name}: {version}" for name, version in sorted((f.get("runtimes") or {}).items())]
        if f.get("clock_offset_s") is not None:
            parts.append(clock_text(f))
        lines.append((alias, f"{f.get('address', '?')}: " + ", ".join(str(p) for p in parts if p)))
    return lines


def clock_text(f: dict) -> str:
    """A host's clock offset to this machine as measured, with its uncertainty."""
    return (f"clock {f['clock_offset_s'] * 1e3:+.3f} ms "
            f"\u00b1 {f['clock_uncertainty_s'] * 1e3:.3f} ms to this machine's")


def local_env_diff(env: dict) -> dict:
    """What a process's environment sets beyond this one's: what is passed to a host."""
    return {k: v for k, v in env.items() if os.environ.get(k) != v}
