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
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from msgbench import catalogue, interrupts, procs
from msgbench.catalogue import LOCALHOST, ServiceError, ServiceSpec
from msgbench.groups import stop_group

TEMP_PREFIX = "msgbench-service-"
LOG_KEEP_BYTES = 1 << 20  # the last MiB of a log goes into the store
SHUTDOWN_GRACE_S = 10.0


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
        if not catalogue.installed(self.spec):
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

    def __init__(self, keep_log: Callable[[str, str], None], note: Callable[[str], None],
                 say: Callable[[str], None] = lambda text: None):
        self.keep_log = keep_log  # (name, text) -> stored with the run
        self.note = note
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
        service = catalogue.spec(name)
        self.say(f"msgbench: starting {name}")
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
        self.note(f"service {name} {catalogue.version(service)} on {running.url}")
        return running

    def _stop(self, name: str) -> None:
        with interrupts.deferred():  # stopped, its directory removed and its log kept, or none
            running = self.running.pop(name)
            text = running.stop()
            label = name if self.starts.get(name, 1) == 1 else f"{name}#{self.starts[name]}"
            self.keep_log(label, text)
