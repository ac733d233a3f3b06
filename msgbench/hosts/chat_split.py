"""The chat server kind across hosts (docs/hosts.md): the harness starts the target's
chat server on the server's host and one load generator (kits/chatload) per clients'
host, each owning whole groups, releases them together, and merges their raw facts.

The harness, not a load generator, starts the server here: several generators share it,
and a generator on another host than the server would need ssh access to that host.
Every group's members are clients of one generator, so each delivery is sent and
received, checked and timed on that generator's clock: no clock offset between hosts
enters a latency. The generators meet twice at a barrier (they print a ready line and
wait for "go" on stdin): after the lead (the first, which reads the server's stats) has
taken the server's baseline, so no client is connected before it; once every client of
every generator has joined, so T starts at one release; and once every generator has
drained (and the lead read the server's last stats), so no generator's clients leave
while the lead still counts the server's connections.
"""

import contextlib
import os
import selectors
import subprocess
import time
from dataclasses import dataclass, field

from msgbench.core import interrupts, jsonio
from msgbench.hosts import inventory as hosts
from msgbench.hosts import remote
from msgbench.workers import chat_server, procs
from msgbench.workers.groups import stop_group
from msgbench.workers.worker import STDERR_KEEP_BYTES, SUPERVISOR_GRACE_S, Outcome, Protocol, judge

LISTEN_WITHIN_S = 120.0  # a JVM's or a BEAM's start on a loaded host, ssh included
STAGES = ("connect", "send", "close")
STOP_WITHIN_S = 5.0
# A generator's facts merged by sum (counts, the generators' CPU and memory together)
# or by the largest (durations: the slowest generator's; maxima); the rest are the
# lead's, which alone reads the server's stats.
SUMMED = ("received_in_window", "connections_opened", "loadgen_cpu_ns", "loadgen_window_cpu_ns",
          "loadgen_peak_rss_bytes")
LARGEST = ("setup_ns", "send_window_ns", "drain_ns", "latency_max_ns", "connect_max_ns")


class SplitError(RuntimeError):
    pass


def split_groups(groups: int, generators: int) -> list[tuple[int, int]]:
    """(first group, count) per generator: whole groups, as even as can be."""
    if generators > groups:
        raise SplitError(f"{generators} load generators need at least as many groups; groups={groups}")
    base, extra = divmod(groups, generators)
    shares, first = [], 0
    for i in range(generators):
        count = base + (i < extra)
        shares.append((first, count))
        first += count
    return shares


@dataclass
class Part:
    """One process of the run: the server or a load generator, here or over ssh."""

    role: str
    host: "hosts.Host | None"
    proc: subprocess.Popen
    status_read: int
    streams: set = field(default_factory=lambda: {"out", "err"})
    stderr: bytearray = field(default_factory=bytearray)
    pending: bytes = b""
    protocol: Protocol | None = None
    ready: set = field(default_factory=set)
    groups: tuple[int, int] | None = None
    report: dict = field(default_factory=dict)  # the supervisor's
    port: int | None = None  # the server's, once it said it listens

    @property
    def where(self) -> str:
        return f"host {self.host.alias} ({self.host.address})" if self.host else "this machine"

    @property
    def done(self) -> bool:
        return not self.streams

    def usage(self) -> dict:
        """CPU and peak RSS as measured where it ran: remote.py's report over ssh, the
        supervisor's here."""
        there = remote.parse_report(self.stderr.decode(errors="replace")) if self.host else None
        source = there if self.host else self.report
        return {"role": self.role, "host": self.host.alias if self.host else hosts.LOCAL,
                "cpu_s": (source or {}).get("cpu_s"), "max_rss_bytes": (source or {}).get("max_rss_bytes"),
                "exit_code": (source or {}).get("exit_code")} | ({"groups": list(self.groups)} if self.groups else {})


def _start(role: str, host, argv: list[str], cwd, env: dict) -> Part:
    status_read, status_write = os.pipe()
    interrupts.hold()
    try:
        proc = subprocess.Popen(procs.supervised_argv(argv, status_write, SUPERVISOR_GRACE_S), cwd=cwd, env=env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, pass_fds=(status_write,))
    except OSError as exc:
        os.close(status_read)
        raise SplitError(f"cannot start the {role} ({argv[0]!r}): {exc}") from None
    finally:
        os.close(status_write)
        interrupts.release()
    return Part(role=role, host=host, proc=proc, status_read=status_read)


class Split:
    """One measurement of the chat server kind with its roles placed (Peers.server_kind_placed)."""

    def __init__(self, job, params: dict, peers, request: dict, time_limit_s: float):
        self.job, self.params, self.peers, self.request = job, params, peers, request
        self.limit_s = time_limit_s
        self.deadline = time.monotonic() + time_limit_s
        self.server: Part | None = None
        self.generators: list[Part] = []
        self.selector = selectors.DefaultSelector()
        self.timed_out = False

    # ------------------------------------------------------------ starting

    def _start_server(self) -> None:
        target, host = self.job.target, self.peers.host_of("server")
        users = chat_server.users(self.params)
        argv = [*chat_server.server_argv(target, self.job.variant, self.job.process_limit), "--listen", "0.0.0.0:0"]
        env = target.build_env()
        cwd = target.folder
        if host is not None:
            argv = self.peers.ssh.command(host, argv, cwd=host.folder(target.folder), env=hosts.local_env_diff(env),
                                          grace_s=2.0, nofile=users + chat_server.FD_SLACK)
        self.server = _start("server", host, argv, cwd, env)
        self._watch(self.server)

    def _start_generators(self) -> None:
        target = self.job.target
        server_host = self.peers.host_of("server")
        places = self.peers.hosts_of("clients") or [None]
        shares = split_groups(int(self.params["groups"]), len(places))
        for index, (host, share) in enumerate(zip(places, shares, strict=True)):
            env = target.build_env() | chat_server.identity_env(target) | {
                "MSGBENCH_CHAT_SERVER_URL": f"ws://{self._server_address(host, server_host)}:{self.server.port}/",
                "MSGBENCH_CHAT_GROUPS": f"{share[0]}:{share[1]}",
                "MSGBENCH_CHAT_LEAD": "1" if index == 0 else "0",
            }
            argv, cwd = chat_server.worker_argv()
            if host is not None:
                users = share[1] * int(self.params["clients_per_group"])
                argv = self.peers.ssh.command(
                    host, [f"{host.folder(cwd)}/{chat_server.LOAD_GENERATOR[0]}"], cwd=host.folder(cwd),
                    env=hosts.local_env_diff(env), grace_s=2.0, nofile=users + chat_server.FD_SLACK)
            part = _start("clients", host, argv, cwd, env)
            part.groups = share
            part.protocol = Protocol(target.name, self.request["variant"], None,
                                      on_ready=lambda stage, p=part: self._ready(p, stage))
            self.generators.append(part)
            self._watch(part)
            with contextlib.suppress(BrokenPipeError):
                part.proc.stdin.write((jsonio.dumps(self.request) + "\n").encode())
                part.proc.stdin.flush()

    def _server_address(self, host, server_host) -> str:
        """Where a generator on host reaches the server: loopback beside it (the generator
        then spreads its clients over 127.0.0.x), else the server's host address, or this
        machine's address as the generator's host sees it (its ssh connection's source)."""
        if (host.alias if host else None) == (server_host.alias if server_host else None):
            return chat_server.LOCALHOST
        if server_host is not None:
            return server_host.address
        seen = self.peers.facts.get(host.alias, {}).get("harness_address")
        if not seen:
            raise SplitError(f"host {host.alias} did not say which address it sees this machine at "
                             "(SSH_CONNECTION): place the server on a host too")
        return seen

    def _watch(self, part: Part) -> None:
        self.selector.register(part.proc.stdout, selectors.EVENT_READ, (part, "out"))
        self.selector.register(part.proc.stderr, selectors.EVENT_READ, (part, "err"))

    # ------------------------------------------------------------ running

    def _ready(self, part: Part, stage: str) -> None:
        part.ready.add(stage)
        if all(stage in g.ready for g in self.generators):
            for g in self.generators:
                with contextlib.suppress(BrokenPipeError, ValueError):
                    g.proc.stdin.write(b"go\n")
                    g.proc.stdin.flush()
                    if stage == STAGES[-1]:
                        g.proc.stdin.close()  # nothing more to say: its end ends nothing

    def _pump_once(self, until: float | None = None) -> None:
        remaining = (until or self.deadline) - time.monotonic()
        if remaining <= 0:
            self.timed_out = self.timed_out or until is None
            return
        for key, _ in self.selector.select(timeout=min(remaining, 0.5)):
            part, stream = key.data
            chunk = os.read(key.fileobj.fileno(), 65536)
            if not chunk:
                self.selector.unregister(key.fileobj)
                part.streams.discard(stream)
                if stream == "out" and part.pending and part.protocol:
                    part.protocol.feed(part.pending)
            elif stream == "err":
                part.stderr += chunk
                del part.stderr[:-STDERR_KEEP_BYTES]
            else:
                part.pending += chunk
                *lines, part.pending = part.pending.split(b"\n")
                for line in lines:
                    self._line(part, line)

    def _line(self, part: Part, line: bytes) -> None:
        if part.protocol is not None:
            part.protocol.feed(line)
        elif part.port is None and line.strip():
            try:
                part.port = int(jsonio.loads(line.decode(errors="replace"))["listening"])
            except (jsonio.JSONError, KeyError, TypeError, ValueError):
                raise SplitError(f"the chat server on {part.where} printed {line[:200]!r} where "
                                 '{"listening": PORT} was due') from None

    def _failed(self, part: Part) -> bool:
        p = part.protocol
        return bool(p.breach) or (p.final is not None and p.final["type"] == "error") or (
            part.done and p.final is None)

    def run(self) -> Outcome:
        started = time.monotonic()
        try:
            self._start_server()
            listen_by = min(self.deadline, time.monotonic() + LISTEN_WITHIN_S)
            while self.server.port is None:
                if self.server.done:
                    raise SplitError(f"the chat server on {self.server.where} exited before saying it was "
                                     f"listening{self._said(self.server)}")
                if time.monotonic() > listen_by:
                    raise SplitError(f"the chat server on {self.server.where} did not say it was listening "
                                     f"within {listen_by - started:.0f} s")
                self._pump_once()
            self._start_generators()
            while not all(g.done for g in self.generators) and not self.timed_out:
                self._pump_once()
                if self.server.done or any(self._failed(g) for g in self.generators):
                    break
            # A failure ends the rest: the server's death shows in every generator within
            # moments; a generator's own failure would leave the others sending for T.
            grace = time.monotonic() + STOP_WITHIN_S
            while not all(g.done for g in self.generators) and time.monotonic() < grace and not self.timed_out:
                self._pump_once()
            if any(self._failed(g) for g in self.generators):  # was it the server? Its session ends too
                self._read_until(lambda: self.server.done, 2.0)
        except SplitError as exc:
            self._stop_all()
            return Outcome(status="failed", error=str(exc), wall_s=time.monotonic() - started,
                           stderr_tail=self._tails(), parts=self._usages())
        except BaseException:
            with interrupts.deferred():
                self._stop_all()
            raise
        server_died = self.server.done
        self._stop_all()
        return self._outcome(started, server_died)

    def _stop_all(self) -> None:
        """Generators first, then the server in order (its stdin closed: its wrapper, or
        the server itself, stops it), every supervisor reaped and its report read."""
        for part in self.generators:
            if not part.done:
                stop_group(part.proc)
        if self.server:
            with contextlib.suppress(OSError, ValueError):
                self.server.proc.stdin.close()
            self._read_until(lambda: self.server.done, STOP_WITHIN_S)
            if not self.server.done:
                stop_group(self.server.proc)
        self._read_until(lambda: False, 2.0)  # what is left of everyone's output
        for part in [*self.generators, *([self.server] if self.server else [])]:
            for stream in (part.proc.stdin, part.proc.stdout, part.proc.stderr):
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
            try:
                part.proc.wait(timeout=STOP_WITHIN_S + SUPERVISOR_GRACE_S)
            except subprocess.TimeoutExpired:
                stop_group(part.proc, grace_s=0)
                part.proc.wait()
            stop_group(part.proc, grace_s=0)
            with os.fdopen(part.status_read, "rb", buffering=0) as status:
                part.report = procs.read_status(status.fileno())
        self.selector.close()

    def _read_until(self, done, within_s: float) -> None:
        until = time.monotonic() + within_s
        while self.selector.get_map() and not done() and time.monotonic() < until:
            self._pump_once(until)

    # ------------------------------------------------------------ the outcome

    @staticmethod
    def _said(part: Part) -> str:
        tail = part.stderr.decode(errors="replace").strip().splitlines()
        tail = [line for line in tail if not line.startswith(remote.MARK)][-3:]
        return f" (stderr: {' | '.join(tail)})" if tail else ""

    def _tails(self) -> str:
        parts = [p for p in [self.server, *self.generators] if p]
        keep = STDERR_KEEP_BYTES // max(len(parts), 1)
        return "".join(f"--- {p.role} on {p.where} ---\n{p.stderr[-keep:].decode(errors='replace')}\n"
                       for p in parts)

    def _usages(self) -> list[dict]:
        return [p.usage() for p in [self.server, *self.generators] if p]

    def _outcome(self, started: float, server_died: bool) -> Outcome:
        outcomes = []
        for g in self.generators:
            o = Outcome(status="error", hello=g.protocol.hello, exit_code=g.report.get("exit_code"),
                        stderr_tail=g.stderr.decode(errors="replace"))
            judge(o, g.protocol, self.timed_out, self.limit_s)
            outcomes.append(o)
        usages = self._usages()
        merged = Outcome(status="ok", hello=outcomes[0].hello, wall_s=time.monotonic() - started,
                         stderr_tail=self._tails(), parts=usages)
        generators = [u for u in usages if u["role"] == "clients"]
        cpu = [u["cpu_s"] for u in generators]
        merged.cpu_s = sum(cpu) if None not in cpu else None
        merged.max_rss_bytes = max((u["max_rss_bytes"] or 0) for u in generators) or None
        merged.exit_code = max((abs(o.exit_code or 0) for o in outcomes), default=0)
        bad = [(g, o) for g, o in zip(self.generators, outcomes, strict=True) if o.status != "ok"]
        if self.timed_out:
            merged.status = "timeout"
            merged.error = f"the chat load generators were still running at the time limit of {self.limit_s:g} s"
        elif server_died:
            merged.status = "failed"
            report = usages[0]
            merged.error = (f"the chat server on {self.server.where} died mid-run (exit code "
                            f"{report['exit_code'] if report['exit_code'] is not None else 'unknown'})"
                            f"{self._said(self.server)}")
        elif bad:
            g, o = bad[0]
            lost = "" if not g.host or remote.parse_report(o.stderr_tail) else (
                " (its ssh session ended without the wrapper's report: the host, its sshd or the "
                "connection went away)")
            merged.status = o.status if o.status != "ok" else "failed"
            merged.error = f"load generator {self.generators.index(g) + 1} on {g.where}{lost}: {o.error}"
        else:
            merge_facts(merged, outcomes)
        return merged


def merge_facts(merged: Outcome, outcomes: list[Outcome]) -> None:
    """Every generator's raw facts as one result: counts summed, durations and maxima the
    largest, histograms' buckets added (percentiles are derived from the merged buckets,
    never averaged), the server's facts and samples the lead's."""
    lead = outcomes[0]
    measured = dict(lead.measured)
    for name in SUMMED:
        measured[name] = sum(o.measured.get(name, 0) for o in outcomes)
    for name in LARGEST:
        measured[name] = max(o.measured.get(name, 0) for o in outcomes)
    verify = {name: sum(o.verify.get(name, 0) for o in outcomes) for name in lead.verify}
    histograms: dict[str, dict[int, int]] = {}
    for o in outcomes:
        for name, pairs in o.histograms.items():
            buckets = histograms.setdefault(name, {})
            for index, count in pairs:
                buckets[index] = buckets.get(index, 0) + count
    merged.measured, merged.verify, merged.series = measured, verify, lead.series
    merged.histograms = {name: [[i, n] for i, n in sorted(b.items())] for name, b in histograms.items()}


def measure(job, params: dict, peers, request: dict, time_limit_s: float) -> Outcome:
    return Split(job, params, peers, request, time_limit_s).run()


def check_hosts(jobs, peers, headroom: float) -> None:
    """The plan's descriptor and memory check, per host (the server's on its host, each
    load generator's share on its): one line naming the host, what it needs and what
    fits. This machine's part was checked with the plan."""
    from msgbench.hosts.placement import PlacementError

    for job in jobs:
        if not peers.server_kind_placed(job, job.params):
            continue
        cpg = int(job.params["clients_per_group"])
        places = peers.hosts_of("clients") or [None]
        shares = split_groups(int(job.params["groups"]), len(places))
        per_connection = chat_server.per_connection_bytes(job.target)
        needs = [("the chat server", peers.host_of("server"), chat_server.users(job.params), per_connection)]
        needs += [("a load generator", host, count * cpg, chat_server.LOAD_GENERATOR_BYTES_PER_CONNECTION)
                  for host, (_, count) in zip(places, shares, strict=True)]
        memory: dict[str, int] = {}
        for what, host, users, per_user in needs:
            if host is None:
                continue
            facts = peers.facts.get(host.alias, {})
            allowed = facts.get("nofile_max")
            if allowed and users + chat_server.FD_SLACK > allowed:
                raise PlacementError(
                    f"{what} on host {host.alias} with {users:,} users needs {users + chat_server.FD_SLACK:,} file "
                    f"descriptors; the host allows {allowed:,} (its hard RLIMIT_NOFILE, fs.nr_open as root): at most "
                    f"{allowed - chat_server.FD_SLACK:,} users fit there")
            memory[host.alias] = memory.get(host.alias, 0) + users * per_user
        for alias, need in memory.items():
            total = peers.facts.get(alias, {}).get("memory_bytes")
            if total and need > total * headroom:
                raise PlacementError(
                    f"chat server=ws on {job.target.label}: host {alias} needs about {need / 2**30:,.1f} GiB for the "
                    f"connections placed there ({per_connection:,} B per connection in the server, "
                    f"{chat_server.LOAD_GENERATOR_BYTES_PER_CONNECTION:,} in a load generator); it has "
                    f"{total / 2**30:,.1f} GiB")
