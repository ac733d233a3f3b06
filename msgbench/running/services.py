"""Services: real brokers that messaging targets need, started and stopped by the run.

Each service (catalogue.py) is started on 127.0.0.1 on a free port with its own
temporary directory and configuration, checked for readiness with its own protocol,
and stopped when the run ends, fails or is interrupted. A server is started with
PR_SET_PDEATHSIG, so even a harness killed with SIGKILL takes it along,
and in a session of its own, so its CPU time can be summed over its processes. Its
log is kept with the run in the store.
"""

import contextlib
import ctypes
import os
import shlex
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from msgbench.core import interrupts, tempdirs
from msgbench.workers import catalogue, cpus, procs, shield
from msgbench.workers.catalogue import LOCALHOST, ServiceError, ServiceSpec
from msgbench.workers.groups import stop_group

TEMP_PREFIX = "msgbench-service-"
LOG_KEEP_BYTES = 1 << 20  # the last MiB of a log goes into the store
SHUTDOWN_GRACE_S = 10.0


# ---------------------------------------------------------------- one running server


def free_ports(count: int) -> list[int]:
    """count distinct free ports of loopback. Their sockets stay open together while the
    kernel picks: a port just closed may be handed out again, and Kafka's two listeners
    once got the same one, one after the other (CI, 2026-11-28)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) for _ in range(count)]
        for sock in socks:
            sock.bind((LOCALHOST, 0))
        return [sock.getsockname()[1] for sock in socks]


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the harness dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _child_setup(cpus: frozenset[int] | None):
    """What a broker's child does before exec: die with the harness, and run on its CPUs
    (set before exec, so every thread the server starts inherits them)."""
    cpuset = shield.path_for(cpus)  # read before the fork: the child only writes

    def setup() -> None:
        _die_with_parent()
        shield.place(cpus, cpuset)
    return setup


class Running:
    """One started server; stop() ends its whole session and keeps its log."""

    def __init__(self, service: ServiceSpec, ports: dict | None = None, host=None, ssh=None,
                 cpus: frozenset[int] | None = None, address: str | None = None):
        self.spec = service
        self.cpus = None if host else cpus  # msgbench/workers/cpus.py's placement holds on this machine only
        if not ports:
            names = ("main", *service.extra_ports)
            ports = dict(zip(names, free_ports(len(names)), strict=True))
        self.ports = ports
        self.port = self.ports["main"]
        self.host, self.ssh = host, ssh  # a hosts.Host and the run's hosts.Ssh; None: here
        # here: loopback, or the address the hosts see this machine at (their roles connect to it)
        self.address = host.address if host else (address or LOCALHOST)
        self.url = service.url(self.port, self.address)
        self.tmp = tempdirs.make(TEMP_PREFIX, service.name)
        self.log_path = self.tmp / "server.log"
        self.procs: list[subprocess.Popen] = []
        self.remote_tmp: str | None = None

    @property
    def where(self) -> str:
        return f" on host {self.host.alias}" if self.host else ""

    def start(self) -> None:
        if self.host:
            return self._start_there()
        if not catalogue.installed(self.spec):
            raise ServiceError(f"service {self.spec.name} needs {self.spec.binary}, which is not "
                               f"installed; install it with: {self.spec.install_command()}")
        launch = self.spec.launch(self.ports, self.tmp, self.address)
        for name, content in launch.files.items():
            (self.tmp / name).write_text(content)
        self._launch(launch, lambda argv: argv, os.environ | launch.env, subprocess.DEVNULL)

    def _start_there(self) -> None:
        """On its host: a temporary directory there, the configuration written into it, the
        server under remote.py (stopped in order when its ssh's stdin closes, the directory
        removed after), its output coming back here as the log."""
        from msgbench.hosts import inventory as hosts  # the hosts' ssh is used only when a broker is placed

        try:
            self.ssh.run(self.host, f"command -v {self.spec.binary} >/dev/null || test -x {self.spec.binary}")
        except hosts.HostError as exc:
            raise ServiceError(f"service {self.spec.name} cannot start on host {self.host.alias}: it lacks "
                               f"{self.spec.binary} (there: {self.spec.install_command()}); {exc}") from None
        try:
            self.remote_tmp = self.ssh.run(self.host, f"mktemp -d /tmp/{TEMP_PREFIX}{self.spec.name}-XXXXXX").strip()
            launch = self.spec.launch(self.ports, Path(self.remote_tmp), self.address)
            for name, content in launch.files.items():
                self.ssh.run(self.host, f"cat > {self.remote_tmp}/{name}", stdin=content.encode())
        except hosts.HostError as exc:
            raise ServiceError(f"service {self.spec.name}: {exc}") from None

        def over_ssh(argv):
            return self.ssh.command(self.host, argv, cwd=self.remote_tmp, env=launch.env, grace_s=SHUTDOWN_GRACE_S,
                                    rmdir=self.remote_tmp if argv is launch.argv else None, stop_on_eof=True)
        self._launch(launch, over_ssh, os.environ, subprocess.PIPE)

    def _launch(self, launch, wrap, env, stdin) -> None:
        with open(self.log_path, "ab") as log:
            for argv, port in [*launch.helpers, (launch.argv, None)]:
                interrupts.hold()  # an interrupt inside Popen would lose the server's pid
                try:
                    self.procs.append(subprocess.Popen(
                        wrap(argv), cwd=self.tmp, env=env, stdin=stdin, stdout=log,
                        stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_child_setup(self.cpus)))
                finally:
                    interrupts.release()
                if port is not None and not self.host:  # a helper (node-local there): the server needs it
                    self._wait_listening(port, 10.0, greet=None)
        self._wait_listening(self.port, self.spec.ready_timeout_s, greet=self.spec.ready)

    @property
    def server(self) -> subprocess.Popen:
        return self.procs[-1]

    def _wait_listening(self, port: int, limit_s: float, greet) -> None:
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            dead = [p for p in self.procs if p.poll() is not None]
            if dead:
                raise ServiceError(f"service {self.spec.name} exited with code {dead[0].returncode} "
                                   f"while starting on {self.address}:{port}{self.where}; its log ends:\n"
                                   f"{self.log_tail()}")
            try:
                with socket.create_connection((self.address, port), timeout=2.0) as sock:
                    sock.settimeout(5.0)
                    if greet is None or greet(sock):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise ServiceError(f"service {self.spec.name} did not answer on {self.address}:{port}{self.where} within "
                           f"{limit_s:.0f} s; its log ends:\n{self.log_tail()}")

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def exit_code(self) -> int | None:
        return self.server.poll()

    def cpu_ms(self) -> float | None:
        """CPU time of every process in the server's sessions (a broker may fork); on a
        host, read there over ssh (None if that fails: the figure is then left out)."""
        if self.host:
            return self._cpu_ms_there()
        return _sessions_cpu_ticks({proc.pid for proc in self.procs}) * 1000.0 / os.sysconf("SC_CLK_TCK")

    def _cpu_ms_there(self) -> float | None:
        from msgbench.hosts import inventory as hosts
        from msgbench.hosts import remote

        sid = remote.parse_session(self.log_text_head())
        if sid is None:
            return None
        try:
            out = self.ssh.run(self.host, shlex.join([self.host.python, "-I", "-S", "-c", remote.SESSION_CPU,
                                                      str(sid)]))
            return float(out)
        except (hosts.HostError, ValueError):
            return None

    def log_text_head(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                return f.read(8192).decode(errors="replace")
        except OSError:
            return ""

    def log_text(self) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, self.log_path.stat().st_size - LOG_KEEP_BYTES))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def log_tail(self, lines: int = 15) -> str:
        return "\n".join(self.log_text().splitlines()[-lines:])

    def stop(self) -> str:
        """Stop every process of the service (TERM, then KILL); return its log."""
        for proc in reversed(self.procs):
            if self.host and proc.stdin:  # remote.py stops the server in order, then exits
                with contextlib.suppress(OSError):
                    proc.stdin.close()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=SHUTDOWN_GRACE_S + 5.0)
            _end_session(proc)
        text = self.log_text()
        shutil.rmtree(self.tmp, ignore_errors=True)
        return text


def _sessions_cpu_ticks(sids: set[int]) -> int:
    """One pass over /proc: utime, stime and the reaped children's cutime and cstime of
    every process in these sessions (a child that exited still counts, once reaped)."""
    return sum(sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
               for _, fields in procs.process_stats() if int(fields[3]) in sids)


def _end_session(proc: subprocess.Popen) -> None:
    """The worker's stop (TERM the group, KILL what outlives the grace), with time
    for a broker's orderly shutdown (RabbitMQ takes seconds), then reap it."""
    stop_group(proc, grace_s=SHUTDOWN_GRACE_S)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=5.0)


# ---------------------------------------------------------------- a run's services


class Services:
    """The services of one run: started on first use, checked around every measurement,
    restarted after a death (which fails the measurement it happened in), and stopped
    with their logs stored when the run ends on any path."""

    def __init__(self, keep_log: Callable[[str, str], None], note: Callable[[str], None],
                 placed: Callable[[], tuple] | None = None, say: Callable[[str], None] = lambda text: None,
                 cpus: frozenset[int] | None = None, listen_here: Callable[[], str | None] | None = None):
        self.keep_log = keep_log  # (name, text) -> stored with the run
        self.cpus = cpus  # the CPUs brokers started here run on (msgbench/workers/cpus.py); None: anywhere
        self.note = note
        self.placed = placed  # () -> (hosts.Host, hosts.Ssh) of the broker role, or None: here
        # () -> the address a broker here listens on, None: loopback (placement.Peers.service_address)
        self.listen_here = listen_here or (lambda: None)
        self.say = say  # a line for the user while it happens: a broker can take seconds to start
        self.running: dict[str, Running] = {}
        self.starts: dict[str, int] = {}

    def __enter__(self) -> "Services":
        return self

    def __exit__(self, *exc) -> None:
        with interrupts.deferred():  # a second Ctrl-C hurries the stop; it never skips one
            for name in list(self.running):
                self.say(f"msgbench: stopping {name}")
                self._stop(name)

    def env_for(self, names: tuple[str, ...]) -> dict:
        """The environment of a worker whose target needs these services (at most one)."""
        if not names:
            return {}
        if len(names) > 1:
            raise ServiceError(f"a target may need one service, not {', '.join(names)}")
        running = self._ensure(names[0])
        return {"MSGBENCH_SERVICE_URL": running.url, "MSGBENCH_SERVICE_NAME": running.spec.name,
                "MSGBENCH_SERVICE_ADDR": f"{running.address}:{running.port}",
                # Its processes' sessions, for a worker that measures the broker's CPU itself.
                "MSGBENCH_SERVICE_SESSIONS": " ".join(str(proc.pid) for proc in running.procs)}

    def cpu_ms(self, names: tuple[str, ...]) -> float | None:
        return self.running[names[0]].cpu_ms() if names and names[0] in self.running else None

    def local_sessions(self) -> set[int]:
        """The sessions of every service running on this machine (part of the measurement,
        not other work: noise.py)."""
        return {proc.pid for running in self.running.values() if running.host is None for proc in running.procs}

    def here(self, names: tuple[str, ...]) -> bool:
        """Whether the target's service runs on this machine (its CPU is this machine's load)."""
        return bool(names) and names[0] in self.running and self.running[names[0]].host is None

    def died(self, names: tuple[str, ...]) -> str | None:
        """Why the target's service is gone, if it died since it started."""
        running = self.running.get(names[0]) if names else None
        if running is None or running.alive():
            return None
        return (f"service {running.spec.name} ({running.url}{running.where}) died during the measurement "
                f"(exit code {running.exit_code()}); its log ends:\n{running.log_tail(8)}")

    def _ensure(self, name: str) -> Running:
        running = self.running.get(name)
        if running is not None and running.alive():
            return running
        if running is not None:
            self.note(f"service {name} had died (exit code {running.exit_code()}); restarted it")
            self._stop(name)
        service = catalogue.spec(name)
        self.say(f"msgbench: starting {name}")
        for attempt in range(3):  # a free port can be taken between finding and binding it
            with interrupts.deferred():  # its temporary directory is never lost track of
                host, ssh = (self.placed() if self.placed else None) or (None, None)
                running = Running(service, host=host, ssh=ssh, cpus=self.cpus,
                                  address=None if host else self.listen_here())
            try:
                running.start()
                break
            except ServiceError:
                with interrupts.deferred():
                    text = running.stop()
                if attempt == 2 or "in use" not in text.lower():
                    raise
            except BaseException:  # Ctrl-C while it starts: stop what did start
                with interrupts.deferred():
                    self.keep_log(name, running.stop())
                raise
        self.running[name] = running
        self.starts[name] = self.starts.get(name, 0) + 1
        placed = "" if running.host else "; " + ", ".join(
            f"pid {proc.pid} may run on CPUs {cpus.cpu_list(found)}" for proc in running.procs
            if (found := cpus.allowed(proc.pid)) is not None)  # read back, not assumed
        self.note(f"service {name} {'' if running.host else catalogue.version(service) + ' '}on {running.url}"
                  f"{running.where}{placed}")
        return running

    def _stop(self, name: str) -> None:
        with interrupts.deferred():  # stopped, its directory removed and its log kept, or none
            running = self.running.pop(name)
            text = running.stop()
            label = name if self.starts.get(name, 1) == 1 else f"{name}#{self.starts[name]}"
            self.keep_log(label, text)
