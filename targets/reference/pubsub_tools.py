"""msgbench target "reference", workload pubsub: each broker's own benchmark tool at msgbench's settings.

One variant per tool (its option `tool`), each against the broker the harness started for it
(target.toml's variant-level `services`, given as MSGBENCH_SERVICE_URL / MSGBENCH_SERVICE_ADDR):

    nats_bench       natscli's `nats bench` (bin/nats, built by `make build`) against nats-server
    nats_bench_js    the same with --js (JetStream on a file store) against nats-server -js
    nats_bench_js_sync  the same with --syncpub: each publish waits for its ack
    redis_benchmark  Debian's redis-benchmark, PUBLISH only, against redis-server
    redis_benchmark_sub  the same with `receivers` reference subscribers attached
                     (bin/redis_subscriber, hiredis): the fair pairing, Redis also delivers every message
    perftest         RabbitMQ PerfTest (lib/, fetched by `make build`) against rabbitmq-server
    kafka_perf       Kafka's kafka-producer-perf-test and kafka-consumer-perf-test (targets/kafka's
                     lib/, fetched by its `make build`) against the Kafka broker; kafka_perf_acks_all
                     the same with acks=all

The tools run their own publishers and subscribers, so the harness's peer (MSGBENCH_PEER_*)
is not used. Every count and time reported comes from a tool's output (raw facts,
spec/README.md: the harness derives the rates); what a tool does not check (order,
duplicates, content) is said in verify (`*_checked: false`) and in README.md. The tools
count messages, not time: each one is calibrated with a short run first, then run with
the number of messages that takes about duration_s to publish.
Standard library only.
"""

import contextlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import asdict, dataclass
from pathlib import Path

from params import Failure as ToolError
from params import read_params, time_limit_s, tool_option

WORKLOAD = "pubsub"
HERE = Path(__file__).resolve().parent
NATS = HERE / "bin" / "nats"
LIB = HERE / "lib"
PERFTEST_MAIN = "com.rabbitmq.perf.PerfTest"

# the option `tool` of the pubsub variants
TOOLS = ("nats_bench", "nats_bench_js", "nats_bench_js_sync", "redis_benchmark", "redis_benchmark_sub",
         "perftest", "kafka_perf", "kafka_perf_acks_all")

ARGV_MAX_BYTES = 131071  # Linux MAX_ARG_STRLEN (128 KiB) less the NUL: redis-benchmark's payload is an argument
CALIBRATION_FIRST = 2000  # messages in the first (calibration) run ...
CALIBRATION_BYTES = 8 << 20  # ... at most this many bytes of them
SIZING_ROUNDS = 4  # the calibration run and at most three sized runs
SUBSCRIBED_GRACE_S = 0.5  # after nats bench logged its subscribers: their SUB and PING/PONG are done
PERFTEST_START_S = 1  # PerfTest's first sampled second, its JVM's start: left out of its steady rates
SAMPLE_S = 0.02  # how often a running tool's VmHWM (and PerfTest's thread CPU) is read
MARGIN_S = 10  # the worker answers this long before the harness's time limit (the spec's time_limit_s)
STARTED = time.monotonic()
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
ANSI = re.compile(r"\x1b\[[0-9;]*m")
KAFKA_NO_RATE = ("a producer rate (--throughput) but latency only from send to ack, not to a consumer, "
                 "and as its own percentiles")


@dataclass(frozen=True)
class Params:
    payload_bytes: int
    duration_s: float
    sources: int
    source_threads: int
    receivers: int
    batching_bytes: int
    rate: float
    drain_ms: int

    @property
    def time_limit_s(self) -> float:
        """The spec's time_limit_s (spec/workloads/pubsub.json) for these params."""
        return time_limit_s("pubsub", asdict(self))


def seconds_ns(seconds: float) -> int:
    return round(seconds * 1e9)


def log(text: str) -> None:
    print(f"reference pubsub: {text}", file=sys.stderr, flush=True)


def tail(text: str, lines: int = 6) -> str:
    return " | ".join(ANSI.sub("", text).replace("\r", "\n").strip().splitlines()[-lines:])


# ---------------------------------------------------------------- parameters


def check_supported(variant: str, p: Params) -> None:
    """unsupported: what the variant's tool cannot do at msgbench's settings."""
    tool = {"nats_bench": "nats bench", "nats_bench_js": "nats bench --js",
            "nats_bench_js_sync": "nats bench --js --syncpub", "redis_benchmark": "redis-benchmark",
            "redis_benchmark_sub": "redis-benchmark",
            "perftest": "PerfTest", "kafka_perf": "kafka-producer-perf-test",
            "kafka_perf_acks_all": "kafka-producer-perf-test"}[variant]
    if p.rate > 0:
        why = {"nats_bench": "no open-loop rate (--pubsleep sleeps after each message) and no latency",
               "nats_bench_js": "no open-loop rate (--pubsleep sleeps after each message) and no latency",
               "nats_bench_js_sync": "no open-loop rate (--pubsleep sleeps after each message) and no latency",
               "redis_benchmark": "no rate option and no subscribers, so no end-to-end latency",
               "redis_benchmark_sub": "no rate option and its publishes carry no time stamp, so no end-to-end "
                                      "latency",
               "perftest": "a producer rate (-r) but latency only as min/median/75th/95th/99th: "
                           "the spec's p99.9 and max it does not report",
               "kafka_perf": KAFKA_NO_RATE, "kafka_perf_acks_all": KAFKA_NO_RATE}[variant]
        raise ToolError("unsupported", f"rate = {p.rate:g}: {tool} has {why}; it is the reference for rate = 0")
    if variant == "perftest" and p.batching_bytes > 0:
        raise ToolError("unsupported", f"batching_bytes = {p.batching_bytes}: PerfTest's Java client writes and "
                                       "flushes every publish; it cannot batch (as msgbench's rabbitmq)")
    if variant in ("nats_bench", "nats_bench_js", "nats_bench_js_sync", "perftest", "kafka_perf",
                   "kafka_perf_acks_all") \
            and p.source_threads != p.sources:
        raise ToolError("unsupported", f"source_threads = {p.source_threads} with sources = {p.sources}: {tool} "
                                       "runs every publisher on its own thread (goroutine), it cannot share "
                                       "threads: use source_threads = sources")
    if variant.startswith("redis_benchmark") and p.payload_bytes > ARGV_MAX_BYTES:
        raise ToolError("unsupported", f"payload_bytes = {p.payload_bytes}: redis-benchmark takes the PUBLISH "
                                       f"payload as a command-line argument, at most {ARGV_MAX_BYTES:,} bytes")


def service_url(variant: str) -> str:
    url = os.environ.get("MSGBENCH_SERVICE_URL")
    if not url:
        raise ToolError("resource", f"MSGBENCH_SERVICE_URL is not set: the harness starts {variant}'s broker "
                                    f"(the variant's services in target.toml)")
    return url


def host_port(url: str) -> tuple[str, int]:
    address = os.environ.get("MSGBENCH_SERVICE_ADDR") or url.split("://", 1)[-1].rsplit("@", 1)[-1]
    host, _, port = address.rpartition(":")
    return host, int(port)


# ---------------------------------------------------------------- running a tool


def ticks_ns(ticks: int) -> int:
    return ticks * 1_000_000_000 // CLOCK_TICKS


def vm_hwm_bytes(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) * 1024 if found else 0


def thread_ticks(pid: int) -> dict[int, tuple[str, int]]:
    """Each thread's name and CPU ticks (utime + stime) from /proc/PID/task."""
    found = {}
    with contextlib.suppress(OSError):
        for task in os.scandir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(task.path, "stat").read_text()
                name = stat[stat.index("(") + 1:stat.rindex(")")]
                fields = stat[stat.rindex(")") + 2:].split()
                found[int(task.name)] = (name, int(fields[11]) + int(fields[12]))
    return found


class Tool:
    """One tool process: its output in temporary files, its VmHWM (and, asked, each thread's CPU) sampled
    while it runs, its own CPU from wait4 when it exits.

    Not getrusage's ru_maxrss for the peak: at exec the kernel records the forking Python's
    high-water mark in the child's maxrss.
    """

    def __init__(self, argv: list[str], threads: bool = False):
        self.argv = argv
        self.threads = threads
        # Owned by the Tool and closed by close(), which cleanup() calls on every path.
        self._out = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self._err = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115
        self.peak_rss = 0
        self.cpu_ns: int | None = None
        self.returncode: int | None = None
        self.thread_cpu: dict[int, tuple[str, int]] = {}
        log(" ".join(a if len(a) < 64 else a[:16] + f"...({len(a)} bytes)" for a in argv))
        try:
            self.proc = subprocess.Popen(argv, cwd=HERE, stdin=subprocess.DEVNULL, stdout=self._out,
                                         stderr=self._err, text=True)
        except OSError as exc:
            raise ToolError("resource", f"cannot start {argv[0]}: {exc}") from None

    @property
    def running(self) -> bool:
        return self.returncode is None

    def sample(self) -> None:
        """Read its VmHWM and threads, then reap it if it exited (the pid stays its own until reaped)."""
        if not self.running:
            return
        self.peak_rss = max(self.peak_rss, vm_hwm_bytes(self.proc.pid))
        if self.threads:
            self.thread_cpu |= thread_ticks(self.proc.pid)
        pid, status, usage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid:
            self._reaped(status, usage)

    def _reaped(self, status: int, usage) -> None:
        self.returncode = self.proc.returncode = os.waitstatus_to_exitcode(status)
        self.cpu_ns = round((usage.ru_utime + usage.ru_stime) * 1e9)

    def kill(self) -> None:
        if self.running:
            with contextlib.suppress(ProcessLookupError):
                self.proc.kill()
            _, status, usage = os.wait4(self.proc.pid, 0)
            self._reaped(status, usage)

    def close(self) -> None:
        self.kill()
        self._out.close()
        self._err.close()

    def stdout(self) -> str:
        self._out.seek(0)
        return self._out.read()

    def stderr(self) -> str:
        self._err.seek(0)
        return self._err.read()

    def check_exit(self) -> None:
        if self.returncode:
            raise ToolError("internal", f"{Path(self.argv[0]).name} exited with status {self.returncode}: "
                                        f"{tail(self.stderr() or self.stdout())}")

    def threads_ns(self, prefix: str) -> int:
        """CPU of its threads whose name starts with prefix, as last sampled (ns)."""
        return ticks_ns(sum(ticks for name, ticks in self.thread_cpu.values() if name.startswith(prefix)))


def remaining_s(p: Params) -> float:
    """What is left of the spec's time limit for this measurement, less a margin to answer in."""
    return max(0.0, STARTED + p.time_limit_s - MARGIN_S - time.monotonic())


def wait_for(tools: list[Tool], within_s: float, until=None, sample_s: float = SAMPLE_S) -> bool:
    """Sample the tools every sample_s until every one exited (True) or until() holds (True), or
    within_s passed (False)."""
    deadline = time.monotonic() + within_s
    while True:
        for tool in tools:
            tool.sample()
        if not any(tool.running for tool in tools) or (until is not None and until()):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(sample_s)


@contextlib.contextmanager
def cleanup(tools: list[Tool]):
    """Whatever happens, no tool outlives the worker."""
    try:
        yield tools
    finally:
        for tool in tools:
            tool.close()


def sized_run(run, first: int, p: Params, overhead_s: float = 0):
    """Run the tool until one run publishes for about duration_s; that run's outcome.

    run(n) publishes n messages and returns (the tool's publish rate, its outcome). The first
    run, of first messages, only calibrates; each next one publishes rate x duration_s messages
    at the rate the previous run reported. A run is kept once it published for at least half of
    duration_s (short runs are slowed by connection set-up, so their rate is low), or after
    SIZING_ROUNDS runs, or when the time limit leaves no room for another (a run takes overhead_s
    beside publishing: kafka_perf's warm-up).
    """
    n = first  # 0: the tool calibrates as it sees fit
    for round_ in range(1, SIZING_ROUNDS + 1):
        rate, outcome = run(n)
        if not rate > 0:
            raise ToolError("internal", f"a run of {n:,} messages reported a publish rate of {rate}")
        seconds = n / rate  # a rate of inf (redis-benchmark faster than its millisecond clock): 0 s
        log(f"run {round_}: " + (f"{n:,} messages published at {rate:,.0f}/s in {seconds:.3f} s" if n
                                  else f"calibration, published at {rate:,.0f}/s"))
        last = round_ == SIZING_ROUNDS or remaining_s(p) < 3 * p.duration_s + 10 + overhead_s  # no room for another
        if round_ > 1 and (seconds >= p.duration_s / 2 or last):
            return outcome
        if not math.isfinite(rate):
            rate = n / 1e-3  # faster than the clock: at least 1,000 times as many next
        n = max(p.sources, round(rate * p.duration_s))
    raise AssertionError("unreachable")


def broker_ticks() -> int | None:
    """CPU ticks (utime stime cutime cstime) of the broker's processes: those in the sessions the
    harness names in MSGBENCH_SERVICE_SESSIONS, as msgbench/catalogue.py counts them (a worker
    cannot import the harness). None when it names none."""
    sids = {int(s) for s in os.environ.get("MSGBENCH_SERVICE_SESSIONS", "").split()}
    if not sids:
        return None
    total = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[3]) in sids:
                    total += sum(int(f) for f in fields[11:15])
    return total


def with_broker_cpu(run):
    """run for sized_run, whose outcome also carries the broker's CPU over that one run (ns, or None).

    The harness measures the broker over the whole worker, calibration and discarded runs
    included; only the worker knows which run it reports, so it measures that one.
    """
    def measured(n: int):
        before = broker_ticks()
        rate, outcome = run(n)
        after = broker_ticks()
        return rate, (outcome, None if before is None or after is None else ticks_ns(after - before))
    return measured


def broker_extra(broker_ns: int | None) -> dict:
    return {} if broker_ns is None else {"broker_cpu_ns": broker_ns}


def first_count(p: Params) -> int:
    return max(10, min(CALIBRATION_FIRST, CALIBRATION_BYTES // p.payload_bytes))


def result(*, publish_ns: int, published: int, receivers: int, receiver_received: list[int],
           receiver_last_ns: list[int], source_cpu_ns: int, receiver_cpu_ns: int, peak_rss: int,
           extra: dict, verify_extra: dict) -> dict:
    """The result line: raw facts (spec/workloads/pubsub.json). The tools time each receiver from its
    first message to its last, so receiver_first_ns is 0 and receiver_last_ns that duration."""
    received = sum(receiver_received) if receivers else 0
    lost = published * receivers - received
    measured = {
        "publish_ns": publish_ns,
        "source_cpu_ns": source_cpu_ns,
        "receiver_cpu_ns": receiver_cpu_ns,
        "peak_rss_bytes": peak_rss,
        "receiver_received": receiver_received,
        "receiver_first_ns": [0] * len(receiver_received),
        "receiver_last_ns": receiver_last_ns,
        **extra,
    }
    # The tools count messages published and received, nothing else: order, duplicates, content
    # and drops are not checked, so their counts are 0 by construction and marked as such. The
    # tools stop only once every subscriber has every message, so nothing is left undelivered.
    verify = {"published": published, "received": received, "undelivered": 0, "lost": lost,
              "receivers": receivers,
              "out_of_order": 0, "duplicates": 0, "corrupt": 0, "dropped": 0,
              "order_checked": False, "duplicates_checked": False, "content_checked": False, **verify_extra}
    return {"type": "result", "measured": measured, "verify": verify}


# ---------------------------------------------------------------- nats bench


NATS_PUB_RATE = re.compile(r"^\s*Pub stats: ([\d,]+) msgs/sec", re.MULTILINE)
NATS_SUBSCRIBER = "Starting subscriber"


@dataclass(frozen=True)
class NatsClient:
    """One row of nats bench's --csv: a publisher (P0, P1, ...) or subscriber (S0, ...)."""

    client: str
    msgs: int  # the connection's own count (nats.go OutMsgs + InMsgs)
    msgs_per_s: float  # job messages / its time (a subscriber: first to last message)
    seconds: float


def parse_nats_csv(text: str, job_size: int | None = None) -> list[NatsClient]:
    """With job_size (JetStream): each client's count is its job's, MsgBytes / size, since the
    connection's counter (MsgCount) also holds the publishes' acks and the consumers' flow
    control; a subscriber ends only once it received its job's every message."""
    rows = [line.split(",") for line in text.strip().splitlines() if line and not line.startswith("#")]
    try:
        return [NatsClient(row[1], int(row[3]) // job_size if job_size else int(row[2]), float(row[4]),
                           float(row[6])) for row in rows]
    except (IndexError, ValueError):
        raise ToolError("internal", f"nats bench's CSV is not as expected: {tail(text)}") from None


def parse_nats_pub_rate(text: str) -> float:
    found = NATS_PUB_RATE.search(text)
    if not found:
        raise ToolError("internal", f"nats bench printed no 'Pub stats': {tail(text)}")
    return float(found.group(1).replace(",", ""))


@dataclass(frozen=True)
class NatsRun:
    pubs: list[NatsClient]
    subs: list[NatsClient]
    pub_rate: float
    pub_cpu_ns: int
    sub_cpu_ns: int
    peak_rss: int


# JetStream (--js): nats bench's own stream "benchstream" on the file store, as large as the
# jetstream target's (4 GiB); the subscribers' process purges it first (one measurement in it),
# then each subscriber reads it with an ordered consumer of its own (every message).
NATS_JS_ARGS = ["--js", "--storage", "file", "--maxbytes", "4GiB"]
# nats_bench_js_sync: its publishers' synchronous mode (js.Publish, each waits for its ack), the
# jetstream target's sync_publish; the subscribers' half is nats_bench_js's.
NATS_JS_SYNC_ARGS = ["--syncpub"]


def nats_argv(url: str, p: Params, msgs: int, csv: Path, role: str, js: bool = False,
              sync: bool = False) -> list[str]:
    count = p.sources if role == "pub" else p.receivers
    jetstream = NATS_JS_ARGS + (["--purge"] if role == "sub" else NATS_JS_SYNC_ARGS if sync else []) if js else []
    return [str(NATS), "--no-context", "-s", url, "bench", "msgbench", f"--{role}", str(count),
            f"--{'sub' if role == 'pub' else 'pub'}", "0", "--msgs", str(msgs), "--size", str(p.payload_bytes),
            "--no-progress", "--csv", str(csv), *jetstream]


def nats_run(url: str, p: Params, msgs: int, js: bool = False, sync: bool = False) -> NatsRun:
    """The subscribers in one nats bench process, then the publishers in another, as nats bench's docs
    run them apart; each waits for its own count (the subscribers for msgs each)."""
    with tempfile.TemporaryDirectory(prefix="msgbench-nats-bench-") as tmp, cleanup([]) as tools:
        sub = Tool(nats_argv(url, p, msgs, Path(tmp, "sub.csv"), "sub", js))
        tools.append(sub)
        if not wait_for([sub], 30, lambda: sub.stderr().count(NATS_SUBSCRIBER) >= p.receivers) or not sub.running:
            sub.check_exit()
            raise ToolError("internal", f"nats bench's subscribers did not start within 30 s: {tail(sub.stderr())}")
        time.sleep(SUBSCRIBED_GRACE_S)
        pub = Tool(nats_argv(url, p, msgs, Path(tmp, "pub.csv"), "pub", js, sync))
        tools.append(pub)
        drain_s = p.drain_ms / 1000 + p.duration_s + 5
        within_s = remaining_s(p) - drain_s
        if not wait_for([pub], within_s):
            raise ToolError("resource", f"nats bench's publishers did not publish {msgs:,} messages within "
                                        f"{within_s:.0f} s (the time limit): {tail(pub.stderr(), 2)}")
        pub.check_exit()
        drain_s = min(drain_s, remaining_s(p))
        if not wait_for([sub], drain_s):
            raise ToolError("resource", f"nats bench's subscribers did not receive all {msgs:,} messages within "
                                        f"{drain_s:g} s of the publishers' end: NATS core is at most once (a slow "
                                        f"consumer loses messages) and nats bench waits for every one, so it "
                                        f"cannot count loss. Subscribers' log: {tail(sub.stderr(), 3)}")
        sub.check_exit()
        size = p.payload_bytes if js else None
        clients = parse_nats_csv(Path(tmp, "pub.csv").read_text(), size) + \
            parse_nats_csv(Path(tmp, "sub.csv").read_text(), size)
        return NatsRun(pubs=[c for c in clients if c.client.startswith("P")],
                       subs=[c for c in clients if c.client.startswith("S")],
                       pub_rate=parse_nats_pub_rate(pub.stdout()), pub_cpu_ns=pub.cpu_ns or 0,
                       sub_cpu_ns=sub.cpu_ns or 0, peak_rss=pub.peak_rss)


def run_nats_bench(p: Params, js: bool = False, sync: bool = False) -> dict:
    if not NATS.exists():
        raise ToolError("resource", f"{NATS} is missing: run `make build` in {HERE} (it builds natscli with Go)")
    url = service_url("nats_bench_js" if js else "nats_bench")

    def one(n: int) -> tuple[float, NatsRun]:
        run = nats_run(url, p, n, js, sync)
        return run.pub_rate, run

    run, broker_ns = sized_run(with_broker_cpu(one), first_count(p), p)
    return nats_result(p, run, broker_ns)


def nats_result(p: Params, run: NatsRun, broker_ns: int | None) -> dict:
    published = sum(c.msgs for c in run.pubs)
    if len(run.subs) != p.receivers or len(run.pubs) != p.sources:
        raise ToolError("internal", f"nats bench reported {len(run.pubs)} publishers and {len(run.subs)} "
                                    f"subscribers, not {p.sources} and {p.receivers}")
    # Stated by nats bench: each subscriber's count and duration (first to last message) in its CSV.
    # Its aggregate Pub stats are a rate only: publish_ns follows from it, published / rate.
    return result(publish_ns=seconds_ns(published / run.pub_rate), published=published, receivers=p.receivers,
                  receiver_received=[c.msgs for c in run.subs],
                  receiver_last_ns=[seconds_ns(c.seconds) for c in run.subs],
                  source_cpu_ns=run.pub_cpu_ns, receiver_cpu_ns=run.sub_cpu_ns, peak_rss=run.peak_rss,
                  extra=broker_extra(broker_ns), verify_extra={})


# ---------------------------------------------------------------- redis-benchmark


REDIS_COMPLETED = re.compile(r"^\s*(\d+) requests completed in ([\d.]+) seconds", re.MULTILINE)
REDIS_THROUGHPUT = re.compile(r"throughput summary: ([\d.]+|inf) requests per second")


@dataclass(frozen=True)
class RedisRun:
    completed: int  # PUBLISH replies the tool counted
    seconds: float
    rps: float
    cpu_ns: int
    peak_rss: int
    subscribers: list[dict]  # bin/redis_subscriber's line of each subscriber (fair pairing), or none
    subscribers_cpu_ns: int


def parse_redis_benchmark(text: str) -> tuple[int, float, float]:
    """redis-benchmark's summary (without -q / --csv): requests completed, seconds, requests per second."""
    summary = text.replace("\r", "\n")
    completed, throughput = REDIS_COMPLETED.search(summary), REDIS_THROUGHPUT.search(summary)
    if not completed or not throughput:
        raise ToolError("internal", f"redis-benchmark printed no summary: {tail(summary)}")
    return int(completed.group(1)), float(completed.group(2)), float(throughput.group(1))


def redis_pipeline(p: Params) -> int:
    """-P: batching_bytes worth of PUBLISH commands per write; batching 0 = one round trip per message."""
    return max(1, p.batching_bytes // p.payload_bytes)


def redis_argv(p: Params, requests: int) -> list[str]:
    host, port = host_port(service_url("redis_benchmark"))
    threads = ["--threads", str(p.source_threads)] if p.source_threads > 1 else []
    return ["redis-benchmark", "-h", host, "-p", str(port), "-c", str(p.sources), "-P", str(redis_pipeline(p)),
            "-n", str(requests), *threads, "PUBLISH", "msgbench.0", "x" * p.payload_bytes]


def redis_subscriber_argv(p: Params, requests: int) -> list[str]:
    host, port = host_port(service_url("redis_benchmark_sub"))
    return [str(HERE / "bin" / "redis_subscriber"), host, str(port), "msgbench.0", str(p.payload_bytes),
            str(requests), str(p.drain_ms)]


def parse_redis_subscriber(text: str) -> dict:
    """The subscriber's JSON line (after its "subscribed")."""
    lines = [line for line in text.splitlines() if line.strip()]
    try:
        found = json.loads(lines[-1])
        if not all(isinstance(found.get(k), int) for k in ("received", "mismatched", "first_ns", "last_ns")):
            raise ValueError
    except (IndexError, ValueError):
        raise ToolError("internal", f"redis_subscriber printed no counts: {tail(text)}") from None
    if found["mismatched"]:
        raise ToolError("internal", f"redis_subscriber got {found['mismatched']:,} pushes that were not a message of "
                                    f"the run's channel and payload size")
    return found


def redis_run(p: Params, requests: int, subscribed: bool) -> RedisRun:
    """One redis-benchmark run of requests PUBLISHes in all (-n, over its -c connections); with subscribed,
    p.receivers reference subscribers attached first, each expecting every one of them."""
    with cleanup([Tool(redis_subscriber_argv(p, requests)) for _ in range(p.receivers if subscribed else 0)]) as subs:
        if not wait_for(subs, 30, lambda: all("subscribed" in s.stdout() for s in subs)) or not all(
                s.running for s in subs):
            for s in subs:
                s.check_exit()
            raise ToolError("internal", "the reference subscribers did not subscribe within 30 s")
        with cleanup([Tool(redis_argv(p, requests))]) as (tool,):
            within_s = remaining_s(p)
            if not wait_for([tool], within_s):
                raise ToolError("resource", f"redis-benchmark did not complete {requests:,} requests within "
                                            f"{within_s:.0f} s (the time limit); its last progress: "
                                            f"{tail(tool.stdout(), 1)}")
            tool.check_exit()
            completed, seconds, rps = parse_redis_benchmark(tool.stdout())
        # A subscriber ends at every message, or drain_ms after its last byte.
        drain_s = min(p.drain_ms / 1000 + 5, remaining_s(p))
        if not wait_for(subs, drain_s):
            raise ToolError("resource", f"the reference subscribers did not finish within {drain_s:g} s")
        for s in subs:
            s.check_exit()
        lines = [parse_redis_subscriber(s.stdout()) for s in subs]
        return RedisRun(completed, seconds, rps, tool.cpu_ns or 0, tool.peak_rss, lines,
                        sum(s.cpu_ns or 0 for s in subs))


def run_redis_benchmark(p: Params, subscribed: bool = False) -> dict:
    if shutil.which("redis-benchmark") is None:
        raise ToolError("resource", "redis-benchmark is not installed: apt-get install -y redis-tools")

    def one(n: int) -> tuple[float, RedisRun]:
        run = redis_run(p, n, subscribed)
        return run.rps, run

    run, broker_ns = sized_run(with_broker_cpu(one), first_count(p), p)
    if subscribed:
        # The fair pairing: Redis delivered every PUBLISH to p.receivers subscribers on the same cores;
        # msgs_per_s is each subscriber's count over its first to last read, as msgbench's receivers.
        return result(publish_ns=seconds_ns(run.seconds), published=run.completed, receivers=p.receivers,
                      receiver_received=[s["received"] for s in run.subscribers],
                      receiver_last_ns=[s["last_ns"] - s["first_ns"] for s in run.subscribers],
                      source_cpu_ns=run.cpu_ns, receiver_cpu_ns=run.subscribers_cpu_ns, peak_rss=run.peak_rss,
                      extra=broker_extra(broker_ns),
                      verify_extra={"subscribers": p.receivers, "pipeline": redis_pipeline(p),
                                    "mismatched": sum(s["mismatched"] for s in run.subscribers)})
    # Stated by redis-benchmark: "N requests completed in S seconds". No subscribers: it only publishes,
    # so its one receiver entry is the PUBLISH replies it counted over those S seconds, and msgs_per_s
    # stays the PUBLISH rate Redis accepts at this pipelining with nothing delivered (an upper bound of
    # the publishing side); receivers = 0 and subscribers = 0 in verify say so.
    return result(publish_ns=seconds_ns(run.seconds), published=run.completed, receivers=0,
                  receiver_received=[run.completed], receiver_last_ns=[seconds_ns(run.seconds)],
                  source_cpu_ns=run.cpu_ns, receiver_cpu_ns=0, peak_rss=run.peak_rss,
                  extra=broker_extra(broker_ns), verify_extra={"subscribers": 0, "pipeline": redis_pipeline(p)})


# ---------------------------------------------------------------- PerfTest


PERFTEST_STOPPED = re.compile(r"^test stopped \((.*)\)\s*$", re.MULTILINE)
PERFTEST_SENDING = re.compile(r"sending rate avg: (\d+) msg/s")
PERFTEST_RECEIVING = re.compile(r"receiving rate avg: (\d+) msg/s")
# One line a second while it runs: that second's rates.
PERFTEST_SAMPLE = re.compile(r"time [\d.]+ s, sent: (\d+) msg/s, received: (\d+) msg/s")
# "[N]" follows only when N > 1: "Producer reached message limit, Consumer reached message limit" for one each.
PERFTEST_PRODUCERS_DONE = re.compile(r"Producer reached message limit(?: \[(\d+)\])?")
PERFTEST_CONSUMERS_DONE = re.compile(r"Consumer reached message limit(?: \[(\d+)\])?")
PERFTEST_VERSION = re.compile(r"RabbitMQ Perf Test ([\w.-]+)")
PRODUCER_THREAD, CONSUMER_THREAD = "perf-test-produ", "perf-test-consu"  # names cut to 15 bytes by Linux


@dataclass(frozen=True)
class PerfTestSummary:
    stopped: str  # why the test stopped, PerfTest's words
    sending: float  # messages sent / the test's time, all producers
    receiving: float  # messages received / the test's time, all consumers
    producers_done: int  # producers that reached their -C message limit
    consumers_done: int  # consumers that reached their -D message limit
    samples: tuple[tuple[float, float], ...] = ()  # each second's (sent, received) msg/s, in order

    @property
    def steady(self) -> tuple[float, float]:
        """(sending, receiving) msg/s without the test's first second, when it has seconds after it.

        Every run is a fresh JVM: its first second loads classes and runs interpreted code until the
        JIT compiles the hot paths, while msgbench's compiled clients start at full speed. The mean
        of the later seconds is PerfTest at speed; with fewer than two seconds, the averages over
        the whole test.
        """
        later = self.samples[PERFTEST_START_S:]
        if not later:
            return self.sending, self.receiving
        return (sum(sent for sent, _ in later) / len(later), sum(received for _, received in later) / len(later))


def parse_perftest(text: str) -> PerfTestSummary:
    plain = ANSI.sub("", text)
    stopped, sending, receiving = (PERFTEST_STOPPED.search(plain), PERFTEST_SENDING.search(plain),
                                   PERFTEST_RECEIVING.search(plain))
    if not stopped or not sending or not receiving:
        raise ToolError("internal", f"PerfTest printed no summary: {tail(plain)}")
    producers, consumers = (PERFTEST_PRODUCERS_DONE.search(stopped.group(1)),
                            PERFTEST_CONSUMERS_DONE.search(stopped.group(1)))

    def done(found) -> int:
        return int(found.group(1) or 1) if found else 0

    samples = tuple((float(sent), float(received)) for sent, received in PERFTEST_SAMPLE.findall(plain))
    return PerfTestSummary(stopped.group(1), float(sending.group(1)), float(receiving.group(1)),
                           done(producers), done(consumers), samples)


def perftest_argv(url: str, p: Params, per_producer: int | None, seconds: int) -> list[str]:
    """-x producers, -y consumers each with its own server-named queue bound with the run's routing key
    (so each gets every message), -a autoack, transient messages; -C/-D message counts, -z a time limit."""
    counts = ["-C", str(per_producer), "-D", str(per_producer * p.sources)] if per_producer else []
    return ["java", "-cp", f"{LIB}/*", PERFTEST_MAIN, "-h", url, "-x", str(p.sources), "-y", str(p.receivers),
            "-s", str(p.payload_bytes), "-a", "-e", "msgbench-perftest", "-t", "direct",
            "-k", f"msgbench-{uuid.uuid4().hex[:12]}", *counts, "-z", str(seconds)]


def perftest_run(url: str, p: Params, per_producer: int | None, seconds: int) -> tuple[PerfTestSummary, Tool]:
    with cleanup([Tool(perftest_argv(url, p, per_producer, seconds), threads=True)]) as (tool,):
        within_s = remaining_s(p)
        if not wait_for([tool], within_s):
            raise ToolError("resource", f"PerfTest did not finish within {within_s:.0f} s (the time limit): "
                                        f"{tail(tool.stdout(), 2)}")
        tool.check_exit()
        return parse_perftest(tool.stdout()), tool


def run_perftest(p: Params) -> dict:
    if not list(LIB.glob("perf-test-*.jar")):
        raise ToolError("resource", f"{LIB}/perf-test-*.jar is missing: run `make build` in {HERE} (Maven)")
    if shutil.which("java") is None:
        raise ToolError("resource", "java is not installed: apt-get install -y default-jre-headless")
    url = service_url("perftest")

    def one(n: int) -> tuple[float, tuple[PerfTestSummary, Tool, int]]:
        """n = 0: the calibration, one second as fast as it goes (-z takes whole seconds)."""
        if n == 0:
            summary, tool = perftest_run(url, p, None, 1)
            return summary.steady[0], (summary, tool, 0)
        # n messages take about duration_s at the last run's rate; the run is made PERFTEST_START_S
        # longer, since that first second is left out of its rates (PerfTestSummary.steady).
        per_producer = math.ceil(n * (1 + PERFTEST_START_S / p.duration_s) / p.sources)
        # -z: PerfTest's own limit, inside the worker's (its JVM starts in about a second).
        limit_s = max(1, math.floor(min(p.duration_s * 3 + p.drain_ms / 1000 + 10, remaining_s(p) - 5)))
        summary, tool = perftest_run(url, p, per_producer, limit_s)
        if summary.producers_done != p.sources or summary.consumers_done != p.receivers:
            raise ToolError("resource", f"PerfTest stopped ({summary.stopped}) before its {p.sources} producer(s) "
                                        f"sent {per_producer:,} messages each and its {p.receivers} consumer(s) "
                                        f"got {per_producer * p.sources:,} each; it does not count what was missing")
        sending, receiving = summary.steady
        log(f"PerfTest: {per_producer * p.sources:,} messages, {len(summary.samples)} s sampled; "
            + (f"steady (its first second left out): sending {sending:,.0f}/s, receiving {receiving:,.0f}/s"
               if len(summary.samples) > PERFTEST_START_S else "fewer than two seconds: its averages"))
        return sending, (summary, tool, per_producer)

    (summary, tool, per_producer), broker_ns = sized_run(with_broker_cpu(one), 0, p)
    return perftest_result(p, summary, tool, per_producer, broker_ns)


def perftest_result(p: Params, summary: PerfTestSummary, tool: Tool, per_producer: int, broker_ns: int | None):
    published = per_producer * summary.producers_done
    per_consumer = per_producer * p.sources
    source_ns, receiver_ns = tool.threads_ns(PRODUCER_THREAD), tool.threads_ns(CONSUMER_THREAD)
    # PerfTest states counts (its limits, all reached) and rates, not times: the times follow from
    # them, count / rate (sending: all producers; receiving: all consumers together, so each
    # consumer's own count over the same time). The rates are its steady ones, without the JVM's
    # first second (PerfTestSummary.steady), as msgbench's clients are measured at speed.
    sending, receiving = summary.steady
    receiving_ns = seconds_ns(per_consumer * p.receivers / (receiving or math.inf))  # 0: no rate
    return result(publish_ns=seconds_ns(published / sending), published=published, receivers=p.receivers,
                  receiver_received=[per_consumer] * summary.consumers_done,
                  receiver_last_ns=[receiving_ns] * summary.consumers_done,
                  source_cpu_ns=source_ns, receiver_cpu_ns=receiver_ns, peak_rss=tool.peak_rss,
                  extra={"tool_other_cpu_ns": max(0, (tool.cpu_ns or 0) - source_ns - receiver_ns)}
                  | broker_extra(broker_ns),
                  verify_extra={})


# ---------------------------------------------------------------- Kafka's perf tools


# kafka-producer-perf-test and kafka-consumer-perf-test are these classes of kafka-tools, which
# targets/kafka's build fetched with the broker (its broker/pom.xml, the same version): the tools
# of the very jars the harness runs the broker from, not a second copy.
KAFKA_LIB = HERE.parent / "kafka" / "lib"
KAFKA_PRODUCER_MAIN = "org.apache.kafka.tools.ProducerPerformance"
KAFKA_CONSUMER_MAIN = "org.apache.kafka.tools.ConsumerPerformance"
KAFKA_TOPICS_MAIN = "org.apache.kafka.tools.TopicCommand"
# What Kafka's bin/kafka-*-perf-test.sh and kafka-run-class.sh give these tools' JVMs.
KAFKA_JVM = ["-Xmx512M", "-server", "-XX:+UseG1GC", "-XX:MaxGCPauseMillis=20",
             "-XX:InitiatingHeapOccupancyPercent=35", "-XX:+ExplicitGCInvokesConcurrent",
             "-Djava.awt.headless=true"]
# The tools log through Log4j 2; these lines say when a consumer's position is fixed (so the
# producers may start) and nothing else.
KAFKA_LOG4J = """status = warn
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %c{1} %m%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = err
logger.position.name = org.apache.kafka.clients.consumer.internals.SubscriptionState
logger.position.level = info
"""
KAFKA_POSITIONED = re.compile(r"Resetting offset for partition (\S+)-(\d+) to position")
# kafka-producer-perf-test's summaries (with the percentiles; the progress lines every 5 s have
# none): every record's, then, with --warmup-records, the steady state's ("N steady state records").
KAFKA_PRODUCER_TOTAL = re.compile(r"^(\d+)( steady state)? records sent, ([\d.]+) records/sec \([\d.]+ MB/sec\), "
                                  r"[\d.]+ ms avg latency, [\d.]+ ms max latency, "
                                  r"\d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99.9th\.$",
                                  re.MULTILINE)
# kafka-consumer-perf-test --show-detailed-stats --hide-header --reporting-interval 1: a line at
# the first record of each poll that comes 1 ms or more after the last line: the time (its
# --date-format), 0, MB so far, MB/s, records so far, ...
KAFKA_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss.SSS"
KAFKA_CONSUMER_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}), \d+, [\d.]+, [\d.]+, (\d+), ",
                                 re.MULTILINE)
KAFKA_CONSUMER_SHORT = "WARNING: Exiting before consuming the expected number of"  # records (4.x), messages (3.x)
# kafka-producer-perf-test's progress line, one per --reporting-interval window: the records
# acknowledged in it and their rate (so its length, records / rate). The windows tile its run.
KAFKA_PRODUCER_WINDOW = re.compile(r"^(\d+) records sent, ([\d.]+) records/sec \([\d.]+ MB/sec\), "
                                   r"[\d.]+ ms avg latency, [\d.]+ ms max latency\.$", re.MULTILINE)
KAFKA_REPORT_MS = 100  # the producers' --reporting-interval
KAFKA_STEADY = "In steady state."  # printed before its first steady-state window
# Warm JVMs. Every run's producers and consumers are fresh JVMs, on the one measured CPU after
# `msgbench tune`; a JVM starts interpreted and its JIT compiles the client's hot paths over its
# first seconds (GC beside it). With 1 s of warm-up the tools read 4-27x below the kafka target, at
# 140 us of CPU a record: the JIT's rate, not Kafka's (docs/measurements/issue-34-sweep.md). So each
# producer sends KAFKA_WARMUP_S worth of --warmup-records (the tool's own option, KIP-1052) before
# the records it is timed by, and the consumers read those too and are timed from past them.
# The producer is timed by its own steady-state windows (once past the warm-up it prints only
# those: the steady-state records' acks), from its second one: the first starts when the last
# warm-up record is handed to send(), and with --throughput -1 the client's buffer (32 MiB) then
# still holds up to 32 MiB of warm-up records to send, whose acks it waits through (at 16 B,
# seconds' worth). Its steady-state summary spans that first window too, so it is not used.
# The calibration that sizes a run is warm as well: the producers alone, each until its windows
# past the warm-up cover KAFKA_CALIBRATION_S, their rate taken; then they are stopped (their
# --num-records, KAFKA_CALIBRATION_CAP, is never meant to be reached).
# Both scale with duration_s up to their full length, as the spec's time limit does (60 s + 3 x
# duration_s + ...): a measurement (duration_s 4 and up: the default 5, the sweeps') gets the
# whole 8 s and 2 s. Below KAFKA_WARM_FROM_S a run is a quick check (the conformance suite's
# duration_s 0.3, a JVM per process and run on what may be a loaded machine), for which the
# limit leaves no room for warm JVMs: 1 s of warm-up and a cold calibration of first_count
# records (the producers' steady-state summary), as before issue 34's second round.
KAFKA_WARMUP_S = 8
KAFKA_CALIBRATION_S = 2
KAFKA_WARM_FROM_S = 2


def kafka_warm(p: Params) -> bool:
    return p.duration_s >= KAFKA_WARM_FROM_S


def kafka_warmup_s(p: Params) -> float:
    return min(KAFKA_WARMUP_S, 2 * p.duration_s) if kafka_warm(p) else 1.0


def kafka_calibration_s(p: Params) -> float:
    return min(KAFKA_CALIBRATION_S, p.duration_s / 2)


KAFKA_CALIBRATION_CAP = 10**9
# What a run takes beside publishing and its warm-up, for sized_run: the JVMs' starts, the drain.
KAFKA_RUN_OVERHEAD_S = 10
KAFKA_MAX_BYTES = 8 << 20  # the broker's message.max.bytes (msgbench/workers/catalogue.py), the kafka target's
# The measurement's topic as the kafka target makes its own (targets/kafka/internal/kafkasys): a
# partition bounded to 1 GiB (checked every 10 s) in 128 MiB segments, so that warm-up and
# calibration records do not fill the disk; the topic is deleted after the measurement.
KAFKA_TOPIC_CONFIG = {"retention.bytes": 1 << 30, "segment.bytes": 128 << 20}


@dataclass(frozen=True)
class KafkaProduced:
    records: int  # "N records sent": acknowledged records (a failed send is not counted), warm-up included
    rate: float  # its steady-state records/sec: from the end of its warm-up records to its last ack


@dataclass(frozen=True)
class KafkaConsumed:
    received: int  # records it read: --num-records when it did not time out
    rate: float  # records/s from its first line (its first record) to its last


def parse_kafka_producer(text: str) -> KafkaProduced:
    """Its count from the summary of every record; its rate from its steady-state windows
    (steady_windows), or, where it printed none past the first (a run of well under a second),
    from its steady-state summary."""
    found = {bool(m.group(2)): m for m in KAFKA_PRODUCER_TOTAL.finditer(text)}
    if set(found) != {False, True}:
        raise ToolError("internal", f"kafka-producer-perf-test printed no summary and steady-state summary: "
                                    f"{tail(text)}")
    rate = windows_rate(steady_windows(text))
    return KafkaProduced(int(found[False].group(1)), rate or float(found[True].group(3)))


@dataclass(frozen=True)
class KafkaWindow:
    records: int  # acknowledged in the window
    rate: float  # records/sec over the window

    @property
    def seconds(self) -> float:
        return self.records / self.rate if self.rate > 0 else 0.0


def parse_kafka_windows(text: str) -> list[KafkaWindow]:
    """Its progress windows (--reporting-interval), in order."""
    return [KafkaWindow(int(n), float(rate)) for n, rate in KAFKA_PRODUCER_WINDOW.findall(text)]


def windows_rate(windows: list[KafkaWindow], after_s: float = 0, for_s: float = 0) -> float | None:
    """records/sec over the windows that start once after_s has passed (the window in which it
    did left out); None when they cover less than for_s (or nothing)."""
    records, seconds, elapsed = 0, 0.0, 0.0
    for w in windows:
        if elapsed >= after_s:
            records, seconds = records + w.records, seconds + w.seconds
        elapsed += w.seconds
    return records / seconds if records and seconds > 0 and seconds >= for_s else None


def steady_windows(text: str) -> list[KafkaWindow]:
    """With --warmup-records: its windows once in steady state (the steady-state records' acks
    alone: from its "In steady state." line the warm-up's windows are no longer printed), less the
    first, which spans the warm-up records still in the client's buffer."""
    _, marker, steady = text.partition(KAFKA_STEADY)
    return parse_kafka_windows(steady)[1:] if marker else []


def per_second(windows: list[KafkaWindow]) -> str:
    """The windows' rates about each second, for the log: flat once the JVM is warm."""
    shown, records, seconds = [], 0, 0.0
    for w in windows:
        records, seconds = records + w.records, seconds + w.seconds
        if seconds >= 1:
            shown.append(f"{records / seconds:,.0f}")
            records, seconds = 0, 0.0
    return ", ".join(shown)


def parse_kafka_consumer(text: str, expected: int, warmup: int = 0) -> KafkaConsumed:
    """Its lines' counts and times: received is `expected` (--num-records: it stops there, and the
    topic's run holds no more) unless it warned that it timed out, then the last count it printed
    (a lower bound). The rate is from its first line past the producers' warm-up records (without
    them, its first record: count 1) to its last."""
    lines = [(time.mktime(time.strptime(stamp[:19], "%Y-%m-%d %H:%M:%S")) + int(stamp[20:]) / 1000, int(count))
             for stamp, count in KAFKA_CONSUMER_LINE.findall(text)]
    if not lines:
        raise ToolError("internal", f"kafka-consumer-perf-test printed no progress line: {tail(text)}")
    received = lines[-1][1] if KAFKA_CONSUMER_SHORT in text else expected
    (first_s, first_n), (last_s, last_n) = next((line for line in lines if line[1] > warmup), lines[-1]), lines[-1]
    if not (last_s > first_s and last_n > first_n):
        raise ToolError("resource", f"kafka-consumer-perf-test read its {received:,} records in polls less than "
                                    f"1 ms apart: it printed no two progress lines to time it by (a longer "
                                    f"duration_s gives it more)")
    return KafkaConsumed(received, (last_n - first_n) / (last_s - first_s))


def kafka_producer_props(p: Params, acks: str) -> list[str]:
    """acks as the variant says; batching_bytes = 0: the Java client's ordinary batching (batch.size
    16384, linger.ms 5, its defaults), N > 0: batch.size N with linger.ms 10, as the kafka target
    maps it (franz-go's linger); compression off (the client's default, and the kafka target's)."""
    batching = [f"batch.size={p.batching_bytes}", "linger.ms=10"] if p.batching_bytes else []
    return [f"acks={acks}", "compression.type=none", f"max.request.size={KAFKA_MAX_BYTES}", *batching]


def kafka_java(main: str, log4j: Path | None = None) -> list[str]:
    logging = [f"-Dlog4j2.configurationFile={log4j}"] if log4j else []
    return ["java", *KAFKA_JVM, *logging, "-cp", f"{KAFKA_LIB}/*", main]


def kafka_producer_argv(bootstrap: str, topic: str, p: Params, records: int, warmup: int, acks: str) -> list[str]:
    """records after warmup warm-up records (none: no --warmup-records, the calibration)."""
    warming = ["--warmup-records", str(warmup)] if warmup else []
    return [*kafka_java(KAFKA_PRODUCER_MAIN), "--bootstrap-server", bootstrap, "--topic", topic,
            "--num-records", str(records + warmup), *warming, "--reporting-interval", str(KAFKA_REPORT_MS),
            "--record-size", str(p.payload_bytes), "--throughput", "-1",
            "--command-property", *kafka_producer_props(p, acks)]


def kafka_consumer_argv(bootstrap: str, topic: str, group: str, records: int, timeout_ms: int,
                        log4j: Path) -> list[str]:
    return [*kafka_java(KAFKA_CONSUMER_MAIN, log4j), "--bootstrap-server", bootstrap, "--topic", topic,
            "--group", group, "--num-records", str(records), "--from-latest", "--timeout", str(timeout_ms),
            "--show-detailed-stats", "--reporting-interval", "1", "--hide-header",
            "--date-format", KAFKA_DATE_FORMAT]


def kafka_topic_argv(bootstrap: str, topic: str, p: Params) -> list[str]:
    configs = [arg for name, value in KAFKA_TOPIC_CONFIG.items() for arg in ("--config", f"{name}={value}")]
    return [*kafka_java(KAFKA_TOPICS_MAIN), "--bootstrap-server", bootstrap, "--create", "--topic", topic,
            "--partitions", str(p.sources), "--replication-factor", "1", *configs]


def kafka_topic_delete_argv(bootstrap: str, topic: str) -> list[str]:
    return [*kafka_java(KAFKA_TOPICS_MAIN), "--bootstrap-server", bootstrap, "--delete", "--topic", topic]


@dataclass(frozen=True)
class KafkaRun:
    produced: list[KafkaProduced]
    consumed: list[KafkaConsumed]
    source_cpu_ns: int
    receiver_cpu_ns: int
    peak_rss: int

    @property
    def rate(self) -> float:
        """The producers' rates added up: they run side by side."""
        return sum(p.rate for p in self.produced)


def start_kafka_consumers(bootstrap: str, topic: str, p: Params, records: int, log4j: Path) -> list[Tool]:
    """The consumers (one process each, a group of its own: every one reads every partition) from the
    topic's end, each to read records; returned once each has its position on every partition."""
    # --timeout: the longest it waits between records, the first included (the producers' JVMs start
    # meanwhile): the time limit is what bounds it.
    timeout_ms = max(1000, round(1000 * (remaining_s(p) - 5)))
    tag = uuid.uuid4().hex[:12]
    consumers = []
    try:
        consumers.extend(Tool(kafka_consumer_argv(bootstrap, topic, f"msgbench-perf-{tag}-{i}", records, timeout_ms,
                                                  log4j)) for i in range(p.receivers))

        def positioned() -> bool:
            return all(len(set(KAFKA_POSITIONED.findall(c.stderr()))) >= p.sources for c in consumers)

        within_s = remaining_s(p)
        if not wait_for(consumers, within_s, positioned) or not all(c.running for c in consumers):
            for c in consumers:
                c.check_exit()
            raise ToolError("resource", f"kafka-consumer-perf-test did not take its position on every partition "
                                        f"within {within_s:.0f} s (the time limit): {tail(consumers[0].stderr())}")
    except BaseException:
        for c in consumers:
            c.close()
        raise
    return consumers


def kafka_calibrate(bootstrap: str, topic: str, p: Params, acks: str) -> float:
    """The producers alone (a consumer JVM start saved per receiver: on a loaded machine those take
    seconds each, and only the publish rate is read), each until its windows that start past
    kafka_warmup_s cover kafka_calibration_s, then stopped: those windows' rate, added up over the
    producers (they run side by side): warm JVMs'. With the consumers beside them in the run, the
    producers are slower, so its warm-up lasts longer than kafka_warmup_s, never shorter."""
    def rate(tool: Tool) -> float | None:
        return windows_rate(parse_kafka_windows(tool.stdout()), kafka_warmup_s(p), kafka_calibration_s(p))

    with cleanup([]) as tools:
        producers = [Tool(kafka_producer_argv(bootstrap, topic, p, KAFKA_CALIBRATION_CAP, 0, acks))
                     for _ in range(p.sources)]
        tools.extend(producers)
        within_s = remaining_s(p)
        if not wait_for(producers, within_s, lambda: None not in map(rate, producers), sample_s=0.1) \
                or not all(t.running for t in producers):
            for tool in producers:
                tool.check_exit()
            raise ToolError("resource", f"kafka-producer-perf-test did not run for "
                                        f"{kafka_warmup_s(p) + kafka_calibration_s(p):g} s within {within_s:.0f} s "
                                        f"(the time limit): {tail(producers[0].stdout() or producers[0].stderr(), 2)}")
        rates = [rate(t) for t in producers]
        for i, tool in enumerate(producers):
            log(f"calibration, producer {i}: records/s about each second: "
                f"{per_second(parse_kafka_windows(tool.stdout()))}")
    return sum(rates)


def kafka_run(bootstrap: str, topic: str, p: Params, records: int, acks: str, log4j: Path,
              consumed: bool = True) -> KafkaRun:
    """The consumers (start_kafka_consumers), then the producers (one process each, records / sources
    apiece, after warm-up records worth kafka_warmup_s at the rate that sized the run, which the
    consumers read as well). Without consumed, the producers alone (a quick check's cold
    calibration, where only the publish rate is read)."""
    per_producer = math.ceil(records / p.sources)
    warmup = math.ceil(per_producer * kafka_warmup_s(p) / p.duration_s)
    total = (per_producer + warmup) * p.sources
    with cleanup(start_kafka_consumers(bootstrap, topic, p, total, log4j) if consumed else []) as tools:
        consumers = list(tools)
        producers = [Tool(kafka_producer_argv(bootstrap, topic, p, per_producer, warmup, acks))
                     for _ in range(p.sources)]
        tools.extend(producers)
        within_s = remaining_s(p)
        if not wait_for(producers, within_s):
            raise ToolError("resource", f"kafka-producer-perf-test did not send {per_producer + warmup:,} records "
                                        f"within {within_s:.0f} s (the time limit): {tail(producers[0].stdout(), 2)}")
        for tool in producers:
            tool.check_exit()
        produced = [parse_kafka_producer(tool.stdout()) for tool in producers]
        for i, tool in enumerate(producers):  # flat once warm: the log shows whether the warm-up was enough
            log(f"producer {i}: records/s about each second: {per_second(parse_kafka_windows(tool.stdout()))}")
        sent = sum(x.records for x in produced)
        if sent != total:
            raise ToolError("internal", f"kafka-producer-perf-test had {sent:,} of {total:,} records acknowledged: "
                                        f"{tail(producers[0].stderr() or producers[0].stdout())}")
        drain_s = min(p.drain_ms / 1000 + p.duration_s + 5, remaining_s(p))
        if not wait_for(consumers, drain_s):
            raise ToolError("resource", f"kafka-consumer-perf-test did not read {total:,} records within {drain_s:g} s "
                                        f"of the producers' end: {tail(consumers[0].stdout(), 2)}")
        for tool in consumers:
            tool.check_exit()
        return KafkaRun(produced, [parse_kafka_consumer(c.stdout(), total, warmup * p.sources) for c in consumers],
                        sum(t.cpu_ns or 0 for t in producers), sum(t.cpu_ns or 0 for t in consumers),
                        max(t.peak_rss for t in tools))


# The Kafka tools' folder (their log4j settings): /tmp/<prefix><worker pid>-XXXX. A worker
# killed at its time limit (SIGKILL) cannot remove it, so the next one removes every such
# folder whose worker is gone, as the harness does with its own (msgbench/core/tempdirs.py).
KAFKA_TEMP_PREFIX = "msgbench-kafka-perf-"


def sweep_stale_kafka_dirs() -> list[str]:
    """Remove the Kafka tools' folders whose worker is no longer running; their paths."""
    removed = []
    for path in Path(tempfile.gettempdir()).glob(f"{KAFKA_TEMP_PREFIX}*-*"):
        pid = path.name[len(KAFKA_TEMP_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            shutil.rmtree(path, ignore_errors=True)
            removed.append(str(path))
    return removed


def run_kafka_perf(p: Params, acks: str) -> dict:
    if not list(KAFKA_LIB.glob("kafka-tools-*.jar")):
        raise ToolError("resource", f"{KAFKA_LIB}/kafka-tools-*.jar is missing: run `make -C targets/kafka build` "
                                    f"(Maven fetches the broker and its tools)")
    if shutil.which("java") is None:
        raise ToolError("resource", "java is not installed: apt-get install -y default-jre-headless")
    host, port = host_port(service_url("kafka_perf"))
    bootstrap = f"{host}:{port}"
    # One topic per measurement (a partition per source), made by kafka-topics; each run's
    # consumers start from its end, as the kafka target's receivers do.
    topic = f"msgbench-perf-{uuid.uuid4().hex[:12]}"
    sweep_stale_kafka_dirs()
    with tempfile.TemporaryDirectory(prefix=f"{KAFKA_TEMP_PREFIX}{os.getpid()}-") as tmp:
        log4j = Path(tmp, "log4j2.properties")
        log4j.write_text(KAFKA_LOG4J)
        with cleanup([Tool(kafka_topic_argv(bootstrap, topic, p))]) as (made,):
            within_s = remaining_s(p)
            if not wait_for([made], within_s):
                raise ToolError("resource", f"kafka-topics did not create topic {topic} within {within_s:.0f} s "
                                            f"(the time limit)")
            made.check_exit()

        calibrated = []

        def one(n: int) -> tuple[float, KafkaRun | None]:
            if n == 0:  # kafka_warm: a warm calibration
                calibrated.append(True)
                return kafka_calibrate(bootstrap, topic, p, acks), None
            run = kafka_run(bootstrap, topic, p, n, acks, log4j, consumed=bool(calibrated))
            calibrated.append(True)
            return run.rate, run

        try:
            run, broker_ns = sized_run(with_broker_cpu(one), 0 if kafka_warm(p) else first_count(p), p,
                                       overhead_s=kafka_warmup_s(p) + KAFKA_RUN_OVERHEAD_S)
        finally:
            delete_kafka_topic(bootstrap, topic, p)
    return kafka_result(p, run, broker_ns)


def delete_kafka_topic(bootstrap: str, topic: str, p: Params) -> None:
    """The measurement's records go with it. A failure to delete, or no time left to (a JVM start),
    is logged, not an error: the measurement is done, and the topic's retention bounds what stays."""
    within_s = remaining_s(p)
    if within_s < 1:
        log(f"no time left to delete topic {topic}: its retention bounds it")
        return
    with cleanup([Tool(kafka_topic_delete_argv(bootstrap, topic))]) as (deleting,):
        if not wait_for([deleting], within_s) or deleting.returncode:
            log(f"kafka-topics did not delete topic {topic} within {within_s:.0f} s: "
                f"{tail(deleting.stderr() or deleting.stdout(), 2)}")


def kafka_result(p: Params, run: KafkaRun, broker_ns: int | None) -> dict:
    published = sum(x.records for x in run.produced)
    # Stated by the tools: each producer's acknowledged records and rate, each consumer's records
    # and the times of its progress lines. The times follow from them: published / the producers'
    # rates added up, and each consumer's count / its rate from its first record to its last line.
    return result(publish_ns=seconds_ns(published / run.rate), published=published, receivers=p.receivers,
                  receiver_received=[c.received for c in run.consumed],
                  receiver_last_ns=[seconds_ns(c.received / c.rate) for c in run.consumed],
                  source_cpu_ns=run.source_cpu_ns, receiver_cpu_ns=run.receiver_cpu_ns, peak_rss=run.peak_rss,
                  extra=broker_extra(broker_ns), verify_extra={})


# ---------------------------------------------------------------- entry points


RUNNERS = {"nats_bench": run_nats_bench, "nats_bench_js": lambda p: run_nats_bench(p, js=True),
           "nats_bench_js_sync": lambda p: run_nats_bench(p, js=True, sync=True),
           "redis_benchmark": run_redis_benchmark,
           "redis_benchmark_sub": lambda p: run_redis_benchmark(p, subscribed=True), "perftest": run_perftest,
           "kafka_perf": lambda p: run_kafka_perf(p, "1"), "kafka_perf_acks_all": lambda p: run_kafka_perf(p, "all")}


def handle(request: dict) -> dict:
    """The result line for a pubsub request: the tool is the variant's option `tool`."""
    tool = tool_option(request, TOOLS)
    p = read_params(Params, request.get("params"))
    check_supported(tool, p)
    return RUNNERS[tool](p)


def run_quietly(argv: list[str]) -> str:
    try:
        proc = subprocess.run(argv, cwd=HERE, capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return ANSI.sub("", proc.stdout + proc.stderr)


def version(variant: str) -> str:
    """The tool's name and version, for hello's runtime_version and --version."""
    if variant.startswith("nats_bench"):
        text = run_quietly([str(NATS), "--version"]).strip() if NATS.exists() else ""
        return f"natscli {text}" if text else "natscli not built"
    if variant.startswith("redis_benchmark"):
        text = run_quietly(["redis-benchmark", "--version"]).strip() if shutil.which("redis-benchmark") else ""
        return text.splitlines()[0] if text else "redis-benchmark not installed"
    if variant.startswith("kafka_perf"):
        found = [jar.stem.removeprefix("kafka-tools-") for jar in KAFKA_LIB.glob("kafka-tools-[0-9]*.jar")]
        return f"kafka-tools {found[0]} (kafka-producer-perf-test, kafka-consumer-perf-test)" if found \
            else "kafka-tools not fetched (make -C targets/kafka build)"
    jars = sorted(LIB.glob("perf-test-*.jar"))
    found = PERFTEST_VERSION.search(run_quietly(["java", "-cp", f"{LIB}/*", PERFTEST_MAIN, "--version"])) \
        if jars and shutil.which("java") else None
    return f"PerfTest {found.group(1)}" if found else "PerfTest not installed"
