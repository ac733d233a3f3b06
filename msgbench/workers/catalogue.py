"""The service catalogue: the brokers messaging targets need, and how each is started.

Each service is a server from Debian's packages (Kafka: from Maven Central, fetched by
targets/kafka's build): its binary, its package, how its version is asked, how it is
launched on given ports in a temporary directory of its
own (configuration files included), and the protocol-level greeting that says it is
ready. Starting, watching and stopping one is services.py's business.
"""

import shutil
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from msgbench.core import paths
from msgbench.workers import sysinfo

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
    install: str = ""  # how to install it when it is not a Debian package
    built_by: str = ""  # the target whose build makes it (so it is not missing before that build)


    def url(self, port: int, address: str = LOCALHOST) -> str:
        userinfo = "guest:guest@" if self.scheme == "amqp" else ""
        return f"{self.scheme}://{userinfo}{address}:{port}"

    def install_command(self) -> str:
        return self.install or f"apt-get install -y {self.package}"


# ---------------------------------------------------------------- the four brokers


def _nats(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    return Launch(["nats-server", "-a", address, "-p", str(ports["main"]), "--no_advertise"])


def _jetstream(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    # JetStream's file store in the service's own directory (removed when it stops).
    return Launch(["nats-server", "-a", address, "-p", str(ports["main"]), "--no_advertise",
                   "-js", "-sd", str(tmp / "jetstream")])


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


# Made by the kafka target's build, in the targets folder the harness uses.
KAFKA_BROKER = str(paths.targets_dir() / "kafka" / "bin" / "kafka-broker")

# One KRaft node, broker and controller in one JVM, on loopback. Topics are created by the
# kafka target (auto-creation off: a topic with the wrong partition count is never made
# behind its back). Durability is Kafka's default: a write is in the log file's page cache
# when acked and fsynced by the OS's writeback (log.flush.* unset), targets/kafka/README.md.
# The log cleaner checks retention every 10 s (not 5 min): topics are bounded by the
# target's retention.bytes within a run.
KAFKA_PROPERTIES = """process.roles=broker,controller
node.id=1
controller.quorum.voters=1@{address}:{controller}
listeners=PLAINTEXT://{address}:{port},CONTROLLER://{address}:{controller}
advertised.listeners=PLAINTEXT://{address}:{port}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs={tmp}/data
auto.create.topics.enable=false
message.max.bytes=8388608
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
log.retention.check.interval.ms=10000
"""
KAFKA_LOG4J = """rootLogger.level = INFO
rootLogger.appenderRef.out.ref = out
appender.out.type = Console
appender.out.name = out
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
"""
# Memory bounded for a 2-core, 24 GiB machine: Kafka's own default heap (1 GiB, fixed), its
# start script's G1 settings, direct buffers (the network's) capped at 256 MiB: the JVM stays
# under ~1.5 GiB; the log's pages are the OS's page cache, not the broker's memory.
KAFKA_HEAP = "-Xms1g -Xmx1g"
KAFKA_JVM = ("-XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 "
             "-XX:+ExplicitGCInvokesConcurrent -XX:MaxDirectMemorySize=256m -Djava.awt.headless=true")


def _kafka(ports: dict, tmp: Path, address: str = LOCALHOST) -> Launch:
    # The launcher copies the log directory's template formatted at build time into data/.
    return Launch([KAFKA_BROKER, str(tmp / "server.properties")],
                  env={"KAFKA_HEAP_OPTS": KAFKA_HEAP,
                       "KAFKA_JVM_OPTS": f"{KAFKA_JVM} -Dlog4j2.configurationFile={tmp / 'log4j2.properties'}"},
                  files={"server.properties": KAFKA_PROPERTIES.format(
                      address=address, port=ports["main"], controller=ports["controller"], tmp=tmp),
                      "log4j2.properties": KAFKA_LOG4J})


def _kafka_answers(sock: socket.socket) -> bool:
    """An ApiVersions v0 request (correlation id 1, no client id) answered with error code 0:
    the broker serves requests, not only accepts connections."""
    data = b""
    sock.sendall(bytes.fromhex("0000000a00120000" "00000001ffff"))
    while len(data) < 10:
        chunk = sock.recv(4096)
        if not chunk:
            return False
        data += chunk
    return data[4:8] == b"\x00\x00\x00\x01" and data[8:10] == b"\x00\x00"


def _greets(sock: socket.socket, send: bytes, expect: Callable[[bytes], bool]) -> bool:
    if send:
        sock.sendall(send)
    data = sock.recv(4096)
    return bool(data) and expect(data)


SERVICES = {
    "nats": ServiceSpec(
        "nats", "nats-server", "nats-server", "nats", ["nats-server", "--version"], _nats,
        lambda s: _greets(s, b"", lambda d: d.startswith(b"INFO "))),
    "jetstream": ServiceSpec(
        "jetstream", "nats-server", "nats-server", "nats",
        ["nats-server", "--version"], _jetstream,
        lambda s: _greets(s, b"", lambda d: d.startswith(b"INFO ") and b'"jetstream":true' in d)),
    # A JVM start: seconds on an idle 2-core machine, a minute with it loaded 15-fold.
    "kafka": ServiceSpec(
        "kafka", KAFKA_BROKER, "kafka", "kafka", [KAFKA_BROKER, "--version"], _kafka, _kafka_answers,
        ready_timeout_s=120.0, extra_ports=("controller",), install="make -C targets/kafka build",
        built_by="kafka"),
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
