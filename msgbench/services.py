"""Services: real brokers that messaging targets need, started and stopped by the run.

Each service is a server from Debian's packages, started on 127.0.0.1 on a free port
with its own temporary directory and configuration, checked for readiness with its
own protocol, and stopped when the run ends, fails or is interrupted. A server is
started with PR_SET_PDEATHSIG, so even a harness killed with SIGKILL takes it along,
and in a session of its own, so its CPU time can be summed over its processes. Its
log is kept with the run in the store.
"""

import contextlib
import ctypes
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from msgbench import interrupts, procs, sysinfo
from msgbench.worker import stop_group

LOCALHOST = "127.0.0.1"
TEMP_PREFIX = "msgbench-service-"
LOG_KEEP_BYTES = 1 << 20  # the last MiB of a log goes into the store
SHUTDOWN_GRACE_S = 10.0


class ServiceError(RuntimeError):
    """A service that is unknown, not installed, would not start, or died."""


@dataclass(frozen=True)
class Launch:
    argv: list[str]
    env: dict = field(default_factory=dict)
    files: dict = field(default_factory=dict)  # name in the temp dir -> content
    helpers: list[tuple[list[str], int]] = field(default_factory=list)  # (argv, port) started first (epmd)


@dataclass(frozen=True)
class ServiceSpec:
    name: str
    binary: str
    package: str
    scheme: str
    version: list[str]
    launch: Callable[[dict, Path], Launch]  # ports, temp dir -> what to start
    ready: Callable[[socket.socket], bool]  # a protocol-level greeting on a connected socket
    ready_timeout_s: float = 20.0
    extra_ports: tuple[str, ...] = ()

    def url(self, port: int) -> str:
        userinfo = "guest:guest@" if self.scheme == "amqp" else ""
        return f"{self.scheme}://{userinfo}{LOCALHOST}:{port}"

    def install_command(self) -> str:
        return f"apt-get install -y {self.package}"


# ---------------------------------------------------------------- the four brokers


def _nats(ports: dict, tmp: Path) -> Launch:
    return Launch(["nats-server", "-a", LOCALHOST, "-p", str(ports["main"]), "--no_advertise"])


def _redis(ports: dict, tmp: Path) -> Launch:
    # No persistence: a pub/sub benchmark must not fork a saver mid-run.
    return Launch(["redis-server", "--bind", LOCALHOST, "--port", str(ports["main"]), "--save", "",
                   "--appendonly", "no", "--dir", str(tmp), "--daemonize", "no"])


# max_queued_messages 0 / max_inflight_messages 0: no per-client queue limit, so QoS 1
# delivers every message (flow control instead of drops); QoS 0 is still at most once.
# user root: mosquitto would otherwise switch to its own user, which clears the
# parent-death signal.
MOSQUITTO_CONF = """listener {port} 127.0.0.1
allow_anonymous true
persistence false
max_queued_messages 0
max_queued_bytes 0
max_inflight_messages 0
message_size_limit 0
user root
log_dest stderr
log_type error
log_type warning
log_type notice
"""


def _mosquitto(ports: dict, tmp: Path) -> Launch:
    return Launch(["mosquitto", "-c", str(tmp / "mosquitto.conf")],
                  files={"mosquitto.conf": MOSQUITTO_CONF.format(port=ports["main"])})


RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"  # Debian's; /usr/sbin's wrapper changes user


def _rabbitmq(ports: dict, tmp: Path) -> Launch:
    env = {
        "HOME": str(tmp),  # the Erlang cookie
        "RABBITMQ_NODENAME": f"msgbench{ports['main']}@localhost",
        "RABBITMQ_NODE_IP_ADDRESS": LOCALHOST,
        "RABBITMQ_NODE_PORT": str(ports["main"]),
        "RABBITMQ_DIST_PORT": str(ports["dist"]),
        "ERL_EPMD_PORT": str(ports["epmd"]),
        "ERL_EPMD_ADDRESS": LOCALHOST,
        "RABBITMQ_MNESIA_BASE": str(tmp / "mnesia"),
        "RABBITMQ_LOG_BASE": str(tmp / "log"),
        "RABBITMQ_LOGS": "-",
        "RABBITMQ_CONFIG_FILE": str(tmp / "rabbitmq"),
        "RABBITMQ_ENABLED_PLUGINS_FILE": str(tmp / "enabled_plugins"),
        "RABBITMQ_PID_FILE": str(tmp / "rabbitmq.pid"),
    }
    config = "loopback_users.guest = false\nlisteners.tcp.default = {}\n".format(ports["main"])
    # Our own epmd in the foreground on our own port: the node would otherwise start a
    # daemonised epmd that outlives the run.
    return Launch([RABBITMQ_SERVER], env=env,
                  files={"rabbitmq.conf": config, "enabled_plugins": "[].\n"},
                  helpers=[(["epmd", "-port", str(ports["epmd"]), "-address", LOCALHOST], ports["epmd"])])


def _greets(sock: socket.socket, send: bytes, expect: Callable[[bytes], bool]) -> bool:
    if send:
        sock.sendall(send)
    data = sock.recv(4096)
    return bool(data) and expect(data)


SERVICES = {
    "nats": ServiceSpec(
        "nats", "nats-server", "nats-server", "nats", ["nats-server", "--version"], _nats,
        lambda s: _greets(s, b"", lambda d: d.startswith(b"INFO "))),
    "redis": ServiceSpec(
        "redis", "redis-server", "redis-server", "redis", ["redis-server", "--version"], _redis,
        lambda s: _greets(s, b"PING\r\n", lambda d: d.startswith(b"+PONG"))),
    "mosquitto": ServiceSpec(
        "mosquitto", "mosquitto", "mosquitto", "mqtt", ["mosquitto", "-h"], _mosquitto,
        # MQTT 3.1.1 CONNECT, clean session, client id "ready"; CONNACK is 0x20.
        lambda s: _greets(s, bytes.fromhex("101100044d5154540402003c00057265616479"),
                          lambda d: d[:1] == b"\x20")),
    "rabbitmq": ServiceSpec(
        "rabbitmq", RABBITMQ_SERVER, "rabbitmq-server", "amqp",
        ["dpkg-query", "-W", "-f", "rabbitmq-server ${Version}", "rabbitmq-server"], _rabbitmq,
        # AMQP 0-9-1 protocol header; the server answers with a method frame (type 1).
        lambda s: _greets(s, b"AMQP\x00\x00\x09\x01", lambda d: d[:1] == b"\x01"),
        ready_timeout_s=90.0, extra_ports=("dist", "epmd")),
}


def spec(name: str) -> ServiceSpec:
    if name not in SERVICES:
        raise ServiceError(f"unknown service {name!r}; known services: {', '.join(sorted(SERVICES))}")
    return SERVICES[name]


def installed(s: ServiceSpec) -> bool:
    return shutil.which(s.binary) is not None  # which() takes a path too


def version(s: ServiceSpec) -> str:
    if not installed(s):
        return "not installed"
    try:
        return sysinfo.first_line_of(s.version).split(" sha=")[0]  # redis: drop build details
    except sysinfo.CommandHung as exc:  # the broker itself answered; its version is only a note
        return f"unknown ({exc})"


# ---------------------------------------------------------------- one running server


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOCALHOST, 0))
        return sock.getsockname()[1]


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the harness dies, even by SIGKILL."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class Running:
    """One started server; stop() ends its whole session and keeps its log."""

    def __init__(self, service: ServiceSpec, ports: dict | None = None):
        self.spec = service
        self.ports = ports or {"main": free_port(), **{k: free_port() for k in service.extra_ports}}
        self.port = self.ports["main"]
        self.url = service.url(self.port)
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{TEMP_PREFIX}{service.name}-"))
        self.log_path = self.tmp / "server.log"
        self.procs: list[subprocess.Popen] = []

    def start(self) -> None:
        if not installed(self.spec):
            raise ServiceError(f"service {self.spec.name} needs {self.spec.binary}, which is not "
                               f"installed; install it with: {self.spec.install_command()}")
        launch = self.spec.launch(self.ports, self.tmp)
        for name, content in launch.files.items():
            (self.tmp / name).write_text(content)
        env = os.environ | launch.env
        with open(self.log_path, "ab") as log:
            for argv, port in [*launch.helpers, (launch.argv, None)]:
                interrupts.hold()  # an interrupt inside Popen would lose the server's pid
                try:
                    self.procs.append(subprocess.Popen(
                        argv, cwd=self.tmp, env=env, stdin=subprocess.DEVNULL, stdout=log,
                        stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=_die_with_parent))
                finally:
                    interrupts.release()
                if port is not None:  # a helper: the server needs it listening
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
                                   f"while starting on {LOCALHOST}:{port}; its log ends:\n{self.log_tail()}")
            try:
                with socket.create_connection((LOCALHOST, port), timeout=2.0) as sock:
                    sock.settimeout(5.0)
                    if greet is None or greet(sock):
                        return
            except OSError:
                pass
            time.sleep(0.1)
        raise ServiceError(f"service {self.spec.name} did not answer on {LOCALHOST}:{port} within "
                           f"{limit_s:.0f} s; its log ends:\n{self.log_tail()}")

    def alive(self) -> bool:
        return all(p.poll() is None for p in self.procs)

    def exit_code(self) -> int | None:
        return self.server.poll()

    def cpu_ms(self) -> float:
        """CPU time of every process in the server's sessions (a broker may fork)."""
        return _sessions_cpu_ticks({proc.pid for proc in self.procs}) * 1000.0 / os.sysconf("SC_CLK_TCK")

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

    def __init__(self, keep_log: Callable[[str, str], None], note: Callable[[str], None]):
        self.keep_log = keep_log  # (name, text) -> stored with the run
        self.note = note
        self.running: dict[str, Running] = {}
        self.starts: dict[str, int] = {}

    def __enter__(self) -> "Services":
        return self

    def __exit__(self, *exc) -> None:
        with interrupts.deferred():  # a second Ctrl-C hurries the stop; it never skips one
            for name in list(self.running):
                self._stop(name)

    def env_for(self, names: tuple[str, ...]) -> dict:
        """The environment of a worker whose target needs these services (at most one)."""
        if not names:
            return {}
        if len(names) > 1:
            raise ServiceError(f"a target may need one service, not {', '.join(names)}")
        running = self._ensure(names[0])
        return {"MSGBENCH_SERVICE_URL": running.url, "MSGBENCH_SERVICE_NAME": running.spec.name,
                "MSGBENCH_SERVICE_ADDR": f"{LOCALHOST}:{running.port}",
                # Its processes' sessions, for a worker that measures the broker's CPU itself.
                "MSGBENCH_SERVICE_SESSIONS": " ".join(str(proc.pid) for proc in running.procs)}

    def cpu_ms(self, names: tuple[str, ...]) -> float | None:
        return self.running[names[0]].cpu_ms() if names and names[0] in self.running else None

    def died(self, names: tuple[str, ...]) -> str | None:
        """Why the target's service is gone, if it died since it started."""
        running = self.running.get(names[0]) if names else None
        if running is None or running.alive():
            return None
        return (f"service {running.spec.name} ({running.url}) died during the measurement "
                f"(exit code {running.exit_code()}); its log ends:\n{running.log_tail(8)}")

    def _ensure(self, name: str) -> Running:
        running = self.running.get(name)
        if running is not None and running.alive():
            return running
        if running is not None:
            self.note(f"service {name} had died (exit code {running.exit_code()}); restarted it")
            self._stop(name)
        service = spec(name)
        for attempt in range(3):  # a free port can be taken between finding and binding it
            with interrupts.deferred():  # its temporary directory is never lost track of
                running = Running(service)
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
        self.note(f"service {name} {version(service)} on {running.url}")
        return running

    def _stop(self, name: str) -> None:
        with interrupts.deferred():  # stopped, its directory removed and its log kept, or none
            running = self.running.pop(name)
            text = running.stop()
            label = name if self.starts.get(name, 1) == 1 else f"{name}#{self.starts[name]}"
            self.keep_log(label, text)
