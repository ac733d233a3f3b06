"""msgbench target "reference": the standard tools at the socket workload's settings.

One worker per measurement, as every target (spec/README.md): it reads the request on
stdin, writes hello and then result or error on stdout, logs to stderr, exits 0.

    python3 worker.py            the client: starts the server half, runs the tool's client
    python3 worker.py --serve    the server half: runs the tool's server on a free port
    python3 worker.py --version  both tools' versions on one line

Variants (target.toml) choose the tool with their option `tool`: iperf3 measures
mode = flow (one-way bandwidth), sockperf measures mode = echo (ping-pong round trips
over TCP). The worker reports raw facts (spec/README.md); the harness derives the
metrics. README.md says how each
parameter maps to the tool's options and where the tools cannot match the spec.
The pubsub workload's variants (nats_bench, redis_benchmark, perftest, kafka_perf) are in
pubsub_tools.py. Standard library only.
"""

import contextlib
import json
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path

import pubsub_tools
import quiet_run
from params import Failure, read_params, time_limit_s, tool_option

TARGET = "reference"
WORKLOAD = "socket"
HERE = Path(__file__).resolve().parent

# Which mode each tool measures.
TOOL_MODE = {"iperf3": "flow", "sockperf": "echo"}

IPERF3_MAX_BLOCK = 1048576  # iperf3 3.12: "block size too large (maximum = 1048576 bytes)"
SOCKPERF_MIN_SIZE = 14  # sockperf's own header is 14 bytes, inside -m
SOCKPERF_MAX_SIZE = 1048575  # sockperf 3.7's largest -m
# msgbench's frame is a 4-byte length and size bytes (spec: socket, "Framing"); sockperf's -m
# counts every byte of its message. So sockperf sends size + 4 bytes: the same bytes on the wire
# per message as every worker (at 64 KiB the 4 bytes cost a worker ~1.7 µs per round trip:
# 65,540 bytes take one more page than 65,536; docs/fair-clients.md section 4).
FRAME_HEADER_BYTES = 4
SOCKPERF_SERVER_DEFAULT_MAX = 65507  # sockperf server's default -m (largest message it accepts)
SOCKPERF_SECONDS = 2  # sockperf 3.7 runs for a time (-t, whole seconds), not for a count
# A client lives ~2.3 s longer than -t (its warm-up and start-up), longer when many share the cores.
SOCKPERF_CLIENT_MIN_LIMIT_S = SOCKPERF_SECONDS + 30

LISTEN_WITHIN_S = 30  # the server half's tools listen
SERVED_WITHIN_S = 30  # the served line after the client's tool is done
EXIT_WITHIN_S = 10  # a process exits once told to
REQUEST_WITHIN_S = 30  # the server half reads its request
MARGIN_S = 10  # the worker reports before the harness's time limit

ANSI = re.compile(r"\x1b\[[0-9;]*m")
SOCKPERF_TOTAL = re.compile(r"\[Total Run\] RunTime=([\d.]+) sec; Warm up time=\d+ msec; SentMessages=(\d+); "
                            r"ReceivedMessages=(\d+)")
SOCKPERF_VALID = re.compile(r"\[Valid Duration\] RunTime=([\d.]+) sec; SentMessages=(\d+); ReceivedMessages=(\d+)")
SOCKPERF_RTT = re.compile(r"avg-rtt=([\d.]+)")
SOCKPERF_SERVED = re.compile(r"Total (\d+) messages received and handled")


@dataclass(frozen=True)
class Params:
    mode: str
    size: int
    total_bytes: int
    sockets: int
    data: str
    placement: str
    check_content: int
    port: int
    rate: float = 0  # spec: sent only when > 0 (open-loop echo)

    @property
    def messages(self) -> int:
        """Messages per socket: total_bytes / size, as the spec says (size <= total_bytes)."""
        return self.total_bytes // self.size

    @property
    def time_limit_s(self) -> float:
        """The spec's time_limit_s (spec/workloads/socket.json) for these params."""
        return time_limit_s(WORKLOAD, asdict(self))


def say(message: dict) -> None:
    print(json.dumps(message), flush=True)


STARTED = time.monotonic()


def log(text: str) -> None:
    """A line on stderr, stamped with the seconds since this process started."""
    side = "server" if "--serve" in sys.argv else "client"
    print(f"reference {side} +{time.monotonic() - STARTED:.3f}s: {text}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- parameters


def check_supported(variant: str, p: Params) -> None:
    """Unsupported: what the variant's tool cannot do (variant is the tool's name, its option `tool`)."""
    tool_mode = TOOL_MODE[variant]
    if p.mode != tool_mode:
        other = next(v for v, m in TOOL_MODE.items() if m == p.mode)
        raise Failure("unsupported", f"mode = {p.mode}: {variant} measures mode = {tool_mode} only; "
                                     f"{other} measures {p.mode}")
    if p.rate > 0:
        raise Failure("unsupported", f"rate = {p.rate:g}: an open-loop echo times each round trip from its intended "
                                     "send time; sockperf's under-load mode times from the actual send, samples "
                                     "one reply in --reply-every, and reports percentiles, not the histogram")
    if p.data == "list":
        raise Failure("unsupported", 'data = "list" is an Erlang notion (lists of bytes on a socket); '
                                     'the tools send bytes only: use data = "binary"')
    if variant == "iperf3" and p.sockets > 1:
        raise Failure("unsupported", f"sockets = {p.sockets}: iperf3's parallel streams (-P) stop on a coarse "
                                     "byte budget and send or read past the sequence, so their counts cannot "
                                     "be verified; iperf3 is the reference for sockets = 1")
    if variant == "iperf3" and p.size > IPERF3_MAX_BLOCK:
        raise Failure("unsupported", f"size = {p.size}: iperf3 3.12 writes blocks (-l) of at most "
                                     f"{IPERF3_MAX_BLOCK:,} bytes")
    if variant == "sockperf" and not SOCKPERF_MIN_SIZE <= sockperf_message_bytes(p) <= SOCKPERF_MAX_SIZE:
        raise Failure("unsupported", f"size = {p.size}: sockperf 3.7 sends messages (-m) of "
                                     f"{SOCKPERF_MIN_SIZE} to {SOCKPERF_MAX_SIZE:,} bytes, its 14-byte header "
                                     f"included, and here size + {FRAME_HEADER_BYTES} (msgbench's frame): size "
                                     f"{SOCKPERF_MIN_SIZE - FRAME_HEADER_BYTES} to "
                                     f"{SOCKPERF_MAX_SIZE - FRAME_HEADER_BYTES:,}")
    if variant == "sockperf" and p.port and p.port + p.sockets - 1 > 65535:
        raise Failure("unsupported", f"port = {p.port} with sockets = {p.sockets}: sockperf's servers listen on "
                                     f"ports {p.port} to {p.port + p.sockets - 1}, beyond 65535")


# ---------------------------------------------------------------- tools


def tool_version(tool: str) -> str:
    if shutil.which(tool) is None:
        return f"{tool} not installed"
    try:
        proc = subprocess.run([tool, "--version"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{tool} unknown ({exc})"
    lines = (proc.stdout.strip() or proc.stderr.strip()).splitlines()
    return lines[0].strip() if lines else f"{tool} unknown"


def require_tool(tool: str) -> None:
    if shutil.which(tool) is None:
        raise Failure("resource", f"{tool} is not installed: apt-get install -y {tool}")


def tail(text: str, lines: int = 8) -> str:
    return " | ".join(ANSI.sub("", text).strip().splitlines()[-lines:])


def iperf3_client_argv(host: str, port: int, p: Params) -> list[str]:
    """-R: the server half sends, this client receives and stops when -n bytes have arrived."""
    return ["iperf3", "-c", host, "-p", str(port), "-R", "-l", str(p.size),
            "-n", str(p.messages * p.size * p.sockets), "-P", str(p.sockets), "-i", "0", "-J"]


def iperf3_server_argv(port: int) -> list[str]:
    return ["iperf3", "-s", "-1", "-p", str(port), "-i", "0", "-J"]


def pair_cpu(k: int) -> int:
    """The CPU of pair k, as the c target's socket_pin.c picks it: the (k mod n)-th CPU
    this process may run on, in ascending order."""
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[k % len(allowed)]


def pinned(argv: list[str], cpu: int | None) -> list[str]:
    """argv on one CPU (taskset, util-linux): the pinned variant's pair k, both halves on pair_cpu(k)."""
    return argv if cpu is None else ["taskset", "-c", str(cpu), *argv]


def sockperf_message_bytes(p: Params) -> int:
    """What sockperf sends per message: a worker's frame, header and payload (FRAME_HEADER_BYTES)."""
    return p.size + FRAME_HEADER_BYTES


def sockperf_client_argv(host: str, port: int, p: Params) -> list[str]:
    return ["sockperf", "ping-pong", "--tcp", "-i", host, "-p", str(port), "-m", str(sockperf_message_bytes(p)),
            "-t", str(SOCKPERF_SECONDS), "--full-rtt"]


def sockperf_server_argv(port: int, p: Params) -> list[str]:
    size = sockperf_message_bytes(p)
    largest = ["-m", str(size)] if size > SOCKPERF_SERVER_DEFAULT_MAX else []
    return ["sockperf", "server", "--tcp", "-p", str(port), *largest]


def parse_iperf3(text: str) -> dict:
    try:
        report = json.loads(text)
    except json.JSONDecodeError:
        raise Failure("internal", f"iperf3 printed no JSON report: {tail(text)}") from None
    if report.get("error"):
        raise Failure("internal", f"iperf3: {report['error']}")
    if "sum_received" not in report.get("end", {}):
        raise Failure("internal", f"iperf3's report has no end.sum_received: {tail(text)}")
    return report


@dataclass(frozen=True)
class PingPong:
    """One sockperf client's summary: its valid duration (warm-up and cool-down left out) with the
    mean round trip it states for it, and its whole run ([Total Run], its first 400 ms included)."""

    seconds: float
    sent: int
    received: int
    valid_seconds: float
    valid_received: int
    rtt_us: float


def parse_sockperf(text: str) -> PingPong:
    plain = ANSI.sub("", text)
    total, valid, rtt = SOCKPERF_TOTAL.search(plain), SOCKPERF_VALID.search(plain), SOCKPERF_RTT.search(plain)
    if not total or not valid or not rtt:
        raise Failure("internal", f"sockperf printed no summary: {tail(plain)}")
    return PingPong(seconds=float(total.group(1)), sent=int(total.group(2)), received=int(total.group(3)),
                    valid_seconds=float(valid.group(1)), valid_received=int(valid.group(3)),
                    rtt_us=float(rtt.group(1)))


def sockperf_served(text: str) -> int:
    found = SOCKPERF_SERVED.search(ANSI.sub("", text))
    if not found:
        raise Failure("internal", f"sockperf server printed no message count: {tail(text)}")
    return int(found.group(1))


# ---------------------------------------------------------------- results


def seconds_ns(seconds: float) -> int:
    return round(seconds * 1e9)


def flow_result(p: Params, report: dict, served: dict, peak_rss: int) -> dict:
    """iperf3 -R: this client is the receiver; its report times the arrival of the last byte.

    elapsed_ns and wall_ns are the times iperf3 states (seconds, its own clock): each stream's
    receiver time and sum_received's; counts follow from its byte count."""
    end = report["end"]
    received = end["sum_received"]
    wall_ns = seconds_ns(float(received["seconds"]))
    elapsed_ns = [seconds_ns(float(s["receiver"]["seconds"])) for s in end.get("streams", [])] or [wall_ns]
    bytes_received = int(received["bytes"])
    measured = {"elapsed_ns": elapsed_ns, "wall_ns": wall_ns, "peak_rss_bytes": peak_rss}
    # With -P, iperf3's sender checks its byte budget coarsely and may write a little past
    # it; the receiver stops at the budget. What msgbench verifies is that the whole
    # sequence arrived: sent is the sequence, and the tool's own count is kept beside it.
    sequence = p.messages * p.size * p.sockets
    verify = {
        "messages_sent": p.messages * p.sockets,
        "messages_received": bytes_received // p.size,
        "bytes_sent": sequence,
        "bytes_received": bytes_received,
        "tool_bytes_sent": int(served["bytes"]),
        "content_mismatches": 0,
        "content_checked": False,
    }
    return {"type": "result", "measured": measured, "verify": verify}


def echo_result(p: Params, runs: list[PingPong], peak_rss: int) -> dict:
    """sockperf runs for a time, not a count. Each client's figure is the one it prints itself
    ("Summary: Round trip", its avg-rtt): its valid duration and the round trips in it, its first
    400 ms left out as warm-up. Not its whole run: sockperf sleeps 2 s between connecting and its
    first message, and after an idle spell the scheduler keeps a fresh ping-pong pair on one CPU
    for its first ~200 ms (round trips of ~30 µs instead of ~55 µs unpinned on the dev VM), a
    start no msgbench worker has, whose pairs start the moment they are connected
    (docs/fair-clients.md section 4). elapsed_ns is each client's valid duration; the clients ran
    at once, so wall_ns is the longest. Sent is the round trips completed in it; the tool's own
    counts over its whole run are kept beside it (tool_total_*), and its avg-rtt (ns)."""
    elapsed_ns = [seconds_ns(run.valid_seconds) for run in runs]
    received = sum(run.valid_received for run in runs)
    measured = {"elapsed_ns": elapsed_ns, "wall_ns": max(elapsed_ns), "peak_rss_bytes": peak_rss}
    verify = {
        "messages_sent": received,
        "messages_received": received,
        "bytes_sent": received * p.size,
        "bytes_received": received * p.size,
        "content_mismatches": 0,
        "content_checked": False,
        "tool_total_sent": sum(run.sent for run in runs),
        "tool_total_received": sum(run.received for run in runs),
        "tool_total_ns": sum(seconds_ns(run.seconds) for run in runs),
        "tool_round_trip_ns": round(sum(run.rtt_us for run in runs) / len(runs) * 1000),  # verify: integers
    }
    return {"type": "result", "measured": measured, "verify": verify}


# ---------------------------------------------------------------- the client's side of the peer


class Peer:
    """The server half, started from the harness's MSGBENCH_PEER_* environment (spec/README.md, "Peers")."""

    def __init__(self, argv: list[str], cwd: str | None, host: str, request: dict):
        self.host = host
        try:
            self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        except OSError as exc:
            raise Failure("internal", f"cannot start the server half {argv}: {exc}") from None
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.send(request)

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def send(self, message: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except OSError as exc:
            raise Failure("internal", f"the server half does not read its stdin: {exc}") from None

    def expect(self, wanted: str, within_s: float) -> dict:
        """The server's next line of type wanted; its error line is relayed as this worker's error."""
        deadline = time.monotonic() + within_s
        while (remaining := deadline - time.monotonic()) > 0:
            try:
                line = self.lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(timeout=EXIT_WITHIN_S)
                raise Failure("internal", f"the server half closed its stdout (exit status {self.proc.poll()}) "
                                          f"before its {wanted} line")
            message = parse_line(line)
            if message.get("type") == "error":
                kind = message.get("kind") if message.get("kind") in ("unsupported", "resource") else "internal"
                raise Failure(kind, f"the server half: {message.get('message', line.strip())}")
            if message.get("type") == wanted:
                return message
        raise Failure("internal", f"the server half sent no {wanted} line within {within_s} s")

    def close(self) -> None:
        """Close its stdin (it exits then, taking its tools along) and wait for it, within a limit."""
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=EXIT_WITHIN_S)
        except subprocess.TimeoutExpired:
            log(f"the server half did not exit within {EXIT_WITHIN_S} s of its stdin closing: killed")
            self.proc.kill()
            self.proc.wait(timeout=EXIT_WITHIN_S)


def parse_line(line: str) -> dict:
    try:
        message = json.loads(line)
    except json.JSONDecodeError:
        message = None
    if not isinstance(message, dict):
        log(f"the server half printed a line that is not a JSON object: {line.strip()!r}")
        return {}
    return message


def peer_config(p: Params) -> tuple[list[str], str | None, str]:
    """The server's argv, its directory and the host to connect to; without the harness, this very script."""
    host = os.environ.get("MSGBENCH_PEER_HOST") or "127.0.0.1"
    command = os.environ.get("MSGBENCH_PEER_COMMAND")
    if not command:
        if p.placement == "remote":
            raise Failure("unsupported", "placement = remote needs the harness to place the server "
                                         "(MSGBENCH_PEER_COMMAND and MSGBENCH_PEER_HOST are not set)")
        return [sys.executable, str(HERE / "worker.py"), "--serve"], str(HERE), host
    try:
        argv = json.loads(command)
    except json.JSONDecodeError:
        argv = None
    if not (isinstance(argv, list) and argv and all(isinstance(a, str) and a for a in argv)):
        raise Failure("internal", f"MSGBENCH_PEER_COMMAND = {command!r} is not a JSON array of strings")
    cwd = os.environ.get("MSGBENCH_PEER_CWD") or str(HERE)
    # Over ssh the directory is the remote host's (the argv itself changes into it).
    return argv, cwd if os.path.isdir(cwd) else None, host


def run_iperf3(peer: Peer, ports: list[int], p: Params) -> dict:
    limit = max(30.0, p.time_limit_s - MARGIN_S)
    run = quiet_run.run_all([iperf3_client_argv(peer.host, ports[0], p)], limit)[0]
    log("the iperf3 client is done")
    report = parse_iperf3(run.stdout + ("\n" + run.stderr if not run.stdout.strip() else ""))
    served = peer.expect("served", SERVED_WITHIN_S)
    return flow_result(p, report, served, run.peak_rss)


def run_sockperf(peer: Peer, ports: list[int], p: Params, pin: bool) -> dict:
    limit = max(SOCKPERF_CLIENT_MIN_LIMIT_S, p.time_limit_s - MARGIN_S)
    runs = quiet_run.run_all([pinned(sockperf_client_argv(peer.host, port, p), pair_cpu(k) if pin else None)
                      for k, port in enumerate(ports)], limit)
    log(f"{len(runs)} sockperf client(s) done")
    pings = [parse_sockperf(run.stdout + run.stderr) for run in runs]
    peer.send({"type": "done"})
    served = peer.expect("served", SERVED_WITHIN_S)
    log(f"served: {served}")
    return echo_result(p, pings, sum(run.peak_rss for run in runs))


def run_client(variant: str, request: dict, p: Params) -> dict:
    argv, cwd, host = peer_config(p)
    peer = Peer(argv, cwd, host, request)
    try:
        listening = peer.expect("listening", LISTEN_WITHIN_S)
        ports = [int(port) for port in listening.get("ports", [listening["port"]])]
        log(f"the server half listens on {ports}")
        return run_iperf3(peer, ports, p) if variant == "iperf3" else run_sockperf(peer, ports, p, pin_pairs(request))
    finally:
        peer.close()


def socket_request(request) -> tuple[str, Params]:
    """The tool (option `tool`) and the params of a socket request, both halves alike."""
    if not isinstance(request, dict):
        raise Failure("internal", "the request is not a JSON object")
    if request.get("workload") != WORKLOAD:
        raise Failure("unsupported", f"workload {request.get('workload')!r}: the reference tools "
                                     f"measure the socket workload ({', '.join(TOOL_MODE)}) and pubsub "
                                     f"({', '.join(pubsub_tools.TOOLS)}) only")
    tool = tool_option(request, TOOL_MODE, others=("pin",))
    pin_pairs(request)
    p = read_params(Params, request.get("params"))
    check_supported(tool, p)
    require_tool(tool)
    return tool, p


def pin_pairs(request: dict) -> bool:
    """The variant's option pin: "pair" runs sockperf's client and server of pair k on one
    CPU (pair_cpu), as c/tuned places its threads; "none" (or absent) leaves them to the scheduler."""
    pin = request["options"].get("pin", "none")
    if pin not in ("none", "pair"):
        raise Failure("internal", f"option pin = {json.dumps(pin)} is not one of none, pair (target.toml)")
    if pin == "pair" and request["options"]["tool"] != "sockperf":
        raise Failure("internal", "option pin = \"pair\" applies to tool sockperf only (target.toml)")
    return pin == "pair"


def handle(request) -> dict:
    if isinstance(request, dict) and request.get("workload") == pubsub_tools.WORKLOAD:
        return pubsub_tools.handle(request)
    tool, p = socket_request(request)
    return run_client(tool, request, p)


def worker_main() -> int:
    line = sys.stdin.readline()
    try:
        request = json.loads(line)
    except json.JSONDecodeError:
        request = None
    variant = request.get("variant") if isinstance(request, dict) else None
    variant = variant if isinstance(variant, str) and variant else "unknown"
    options = request.get("options") if isinstance(request, dict) else None
    tool = options.get("tool") if isinstance(options, dict) else None
    if tool in TOOL_MODE:
        version = tool_version(tool)
    elif tool in pubsub_tools.TOOLS:
        version = pubsub_tools.version(tool)
    else:
        version = versions_line()
    say({"type": "hello", "target": TARGET, "runtime_version": version, "variant": variant})
    try:
        say(handle(request))
    except Failure as failure:
        say({"type": "error", "kind": failure.kind, "message": failure.message})
    except Exception as exc:  # reported, not raised: the protocol wants an error line and exit 0
        traceback.print_exc()
        say({"type": "error", "kind": "internal", "message": f"{type(exc).__name__}: {exc}"})
    return 0


# ---------------------------------------------------------------- the server half


class Stdin:
    """The server's stdin, read by a thread: the request, then the client's "done", then its close."""

    def __init__(self, stream):
        self.lines: queue.Queue = queue.Queue()
        self.closed = threading.Event()
        self.done = threading.Event()
        self.settled = threading.Event()  # done or closed: what the server half waits for
        self._stream = stream
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        first = True
        for line in self._stream:
            if first:
                self.lines.put(line)
                first = False
            elif parse_line(line).get("type") == "done":
                self.done.set()
                self.settled.set()
        self.closed.set()
        self.settled.set()
        self.lines.put(None)

    def request(self, within_s: float) -> dict:
        try:
            line = self.lines.get(timeout=within_s)
        except queue.Empty:
            raise Failure("internal", f"the server half read no request within {within_s} s") from None
        if line is None:
            raise Failure("internal", "the server half read no request: its stdin closed")
        try:
            return json.loads(line)
        except json.JSONDecodeError:
            raise Failure("internal", f"the server half's request is not JSON: {line.strip()!r}") from None


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("0.0.0.0", port))
        except OSError:
            return True
    return False


def choose_ports(port: int, count: int) -> list[int]:
    """count ports to listen on: free ones the kernel picks (port 0), or port, port + 1, ... (in use: resource)."""
    if port == 0:
        probes = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
        try:
            for probe in probes:
                probe.bind(("0.0.0.0", 0))
            return [probe.getsockname()[1] for probe in probes]
        finally:
            for probe in probes:
                probe.close()
    ports = list(range(port, port + count))
    busy = [p for p in ports if port_in_use(p)]
    if busy:
        raise Failure("resource", f"port {busy[0]} is in use (port = {port}"
                                  f"{f', sockets = {count}' if count > 1 else ''})")
    return ports


def listening_ports() -> set[int]:
    """TCP ports in state LISTEN in this network namespace, from /proc/net/tcp and tcp6."""
    found = set()
    for path in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            rows = Path(path).read_text().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) > 3 and fields[3] == "0A":
                found.add(int(fields[1].rsplit(":", 1)[1], 16))
    return found


class ToolServers:
    """The tool's server processes, one per port, each writing to its own (temporary) output file."""

    def __init__(self, argvs: list[list[str]], outputs: list):
        self.outputs = outputs
        self.procs = [subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                       text=True) for argv, output in zip(argvs, outputs, strict=True)]

    def output(self, k: int) -> str:
        self.outputs[k].seek(0)
        return self.outputs[k].read()

    def check_alive(self) -> None:
        for k, proc in enumerate(self.procs):
            if proc.poll() is not None:
                text = self.output(k)
                kind = "resource" if "in use" in text.lower() else "internal"
                raise Failure(kind, f"{proc.args[0]} server exited (status {proc.returncode}): {tail(text)}")

    def wait_listening(self, ports: list[int], within_s: float) -> None:
        deadline = time.monotonic() + within_s
        while not set(ports) <= listening_ports():
            self.check_alive()
            if time.monotonic() > deadline:
                raise Failure("internal", f"the tool's server did not listen on {ports} within {within_s} s")
            time.sleep(0.02)

    def interrupt(self, within_s: float) -> None:
        """SIGINT (sockperf prints its count then), and wait for every one."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
        for proc in self.procs:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=within_s)

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=EXIT_WITHIN_S)


def serve_iperf3(servers: ToolServers, stdin: Stdin, p: Params) -> dict | None:
    """iperf3 -s -1 exits after one test: then its report says what it sent (-R) and received."""
    proc = servers.procs[0]
    deadline = time.monotonic() + p.time_limit_s
    while proc.poll() is None:
        if stdin.closed.wait(timeout=0.05):
            return None
        if time.monotonic() > deadline:
            raise Failure("internal", f"the iperf3 server did not finish within {p.time_limit_s:.0f} s")
    end = parse_iperf3(servers.output(0))["end"]
    sent, received = int(end["sum_sent"]["bytes"]), int(end["sum_received"]["bytes"])
    # With -R the server half is the sender: what it counted is what it sent.
    counted = sent if sent else received
    return {"type": "served", "messages": counted // p.size, "bytes": counted,
            "bytes_sent": sent, "bytes_received": received}


def serve_sockperf(servers: ToolServers, stdin: Stdin, p: Params) -> dict | None:
    """sockperf servers run until stopped: when the client says done (or its stdin closes).
    Meanwhile this process sleeps, as the client's worker does (quiet_run.py says why): a
    server that died is found when the client is done (its client fails at once anyway)."""
    if not stdin.settled.wait(timeout=p.time_limit_s):
        raise Failure("internal", f"the client did not say done within {p.time_limit_s:.0f} s")
    if not stdin.done.is_set():
        return None
    servers.check_alive()
    log("the client is done: stopping the sockperf servers")
    servers.interrupt(EXIT_WITHIN_S)
    log("the sockperf servers stopped")
    messages = sum(sockperf_served(servers.output(k)) for k in range(len(servers.procs)))
    # sockperf counts messages (warm-up included), not bytes: bytes are messages * size.
    return {"type": "served", "messages": messages, "bytes": messages * p.size}


def serve_request(request, stdin: Stdin) -> None:
    variant, p = socket_request(request)  # variant: the tool
    count = 1 if variant == "iperf3" else p.sockets
    ports = choose_ports(p.port, count)
    pin = pin_pairs(request)
    argvs = [iperf3_server_argv(port) if variant == "iperf3"
             else pinned(sockperf_server_argv(port, p), pair_cpu(k) if pin else None) for k, port in enumerate(ports)]
    with contextlib.ExitStack() as files:
        servers = ToolServers(argvs, [files.enter_context(tempfile.TemporaryFile(mode="w+")) for _ in argvs])
        try:
            servers.wait_listening(ports, LISTEN_WITHIN_S)
            log(f"{argvs[0][0]} listens on {ports}")
            say({"type": "listening", "port": ports[0], "ports": ports})
            served = (serve_iperf3 if variant == "iperf3" else serve_sockperf)(servers, stdin, p)
            if served is not None:
                say(served)
        finally:
            servers.stop()


def exit_on_signal(signum, _frame) -> None:
    raise SystemExit(128 + signum)  # runs the finally blocks that stop the tools


def serve_main() -> int:
    signal.signal(signal.SIGTERM, exit_on_signal)
    signal.signal(signal.SIGHUP, exit_on_signal)
    stdin = Stdin(sys.stdin)
    try:
        serve_request(stdin.request(REQUEST_WITHIN_S), stdin)
    except Failure as failure:
        say({"type": "error", "kind": failure.kind, "message": failure.message})
    except Exception as exc:
        traceback.print_exc()
        say({"type": "error", "kind": "internal", "message": f"{type(exc).__name__}: {exc}"})
    return 0


def versions_line() -> str:
    pubsub = "; ".join(pubsub_tools.version(tool) for tool in pubsub_tools.TOOLS)
    return f"{tool_version('iperf3')}; {tool_version('sockperf')}; {pubsub}"


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print(versions_line())
        return 0
    if "--serve" in argv:
        return serve_main()
    return worker_main()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
