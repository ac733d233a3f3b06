"""The service catalogue: the brokers messaging targets need, and how each is started.

Each service is a server from Debian's packages: its binary, its package, how its
version is asked, how it is launched on given ports in a temporary directory of its
own (configuration files included), and the protocol-level greeting that says it is
ready. Starting, watching and stopping one is services.py's business.
"""

import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from msgbench import sysinfo

LOCALHOST = "127.0.0.1"


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
    launch: Callable[..., Launch]  # ports, temp dir, address to listen on -> what to start
    ready: Callable[[socket.socket], bool]  # a protocol-level greeting on a connected socket
    ready_timeout_s: float = 20.0
    extra_ports: tuple[str, ...] = ()

    def url(self, port: int, address: str = LOCALHOST) -> str:
        userinfo = "guest:guest@" if self.scheme == "amqp" else ""
        return f"{self.scheme}://{userinfo}{address}:{port}"

    def install_command(self) -> str:
        return f"apt-get install -y {self.package}"


# ---------------------------------------------------------------- the four brokers


def _nats(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    return Launch(["nats-server", "-a", address, "-p", str(ports["main"]), "--no_advertise"])


def _redis(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    # No persistence: a pub/sub benchmark must not fork a saver mid-run. Protected mode
    # refuses other hosts' clients of a server without a password: a broker placed on a
    # host serves the sources and receivers of others.
    protected = ["--protected-mode", "no"] if address != LOCALHOST else []
    return Launch(["redis-server", "--bind", address, *protected, "--port", str(ports["main"]), "--save", "",
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


def _mosquitto(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    return Launch(["mosquitto", "-c", str(tmp / "mosquitto.conf")],
                  files={"mosquitto.conf": MOSQUITTO_CONF.format(port=ports["main"]).replace(
                      f"listener {ports['main']} {LOCALHOST}", f"listener {ports['main']} {address}", 1)})


RABBITMQ_SERVER = "/usr/lib/rabbitmq/bin/rabbitmq-server"  # Debian's; /usr/sbin's wrapper changes user


def _rabbitmq(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    env = {
        "HOME": str(tmp),  # the Erlang cookie
        "RABBITMQ_NODENAME": f"msgbench{ports['main']}@localhost",
        "RABBITMQ_NODE_IP_ADDRESS": address,
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
