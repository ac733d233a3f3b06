"""Every chat server the registry declares, held to docs/chat-server.md with a maintained
WebSocket client (Python `websockets`), so that no server is checked only against its own
framing code or the load generator's.

For every target with `chat_server` and every variant in its `chat_server_variants`: the
server starts as the load generator starts it (cwd the target's folder, argv + the
variant's args + `--listen 127.0.0.1:0`, the variant's environment) and says
`{"listening": PORT}` and nothing else on stdout; users join (2 groups x 3 users) and
each gets `{"joined": U}`; text and binary messages (7-, 16- and 64-bit frame lengths) are
delivered verbatim with their opcode to another member of the sender's group, never to
the sender or another group, and spread over the other members; a fragmented message
arrives whole; pings are answered; the
stats connection answers with the required keys; a closed user leaves its group; SIGTERM
and a closed stdin each end the server promptly, and nothing is left running.

Run it against another tree's servers with
`PYTHONPATH=<tree> python -m pytest <this file>` (the registry is the tree's).
"""

import asyncio
import contextlib
import json
import os
import select
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from msgbench.workers import chat_server, targets
from tests.conftest import MARKER, marked_command_lines, ready_target

pytestmark = pytest.mark.targets

GROUPS = 2
USERS_PER_GROUP = 3
HISTORY = 4
START_S = 30  # a loaded machine starts a VM slowly
STOP_S = 10  # "exits promptly": a healthy server needs well under a second
ANSWER_S = 10
QUIET_S = 0.5  # how long to wait for a delivery that must not come
STATS_KEYS = {"peak_rss_bytes", "rss_bytes", "cpu_ns", "connections", "processes", "runtime"}
UNITS = ("_bytes", "_count", "_ns", "_ms", "_percent", "_per_s")


def run_in_own_loop(scenario) -> None:
    """asyncio.run on a thread of its own: another test in this process (playwright's
    sync API) may leave the main thread with a running event loop, where asyncio.run
    refuses to start."""
    failure: list[BaseException] = []

    def body() -> None:
        try:
            asyncio.run(scenario())
        except BaseException as exc:  # handed to the test's thread to fail it there
            failure.append(exc)

    thread = threading.Thread(target=body, name="protocol-scenario")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]



def servers():
    targets.registry.cache_clear()
    return [pytest.param(t.name, variant, id=f"{t.name}-{variant}")
            for t in targets.registry().values() for variant in t.extra.get("chat_server_variants", ())]


class Server:
    """One chat server process, in a session of its own, stopped and reaped on exit."""

    def __init__(self, name: str, variant: str, tmp_path: Path):
        t = ready_target(name)
        assert variant in t.variants, f"{name}: chat_server_variants names {variant!r}, which it does not declare"
        v = t.variants[variant]
        # target.toml's command, run from the target's folder (docs/chat-server.md)
        self.argv = [*chat_server.server_argv(t, v, process_limit=1_000_000), "--listen", "127.0.0.1:0"]
        self.stderr_path = tmp_path / f"{name}-{variant}.stderr"
        self.stderr = open(self.stderr_path, "wb")  # noqa: SIM115 (closed in stop)
        self.proc = subprocess.Popen(self.argv, cwd=t.folder, env=t.worker_env(v), stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.stderr, start_new_session=True)
        line = self._line(START_S)
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            answer = None
        assert isinstance(answer, dict) and set(answer) == {"listening"}, \
            f"the server's first line must be {{\"listening\": PORT}}, not {line!r}{self.log()}"
        self.port = answer["listening"]
        assert isinstance(self.port, int) and 0 < self.port < 65536, f"bad port in {line!r}"
        self.url = f"ws://127.0.0.1:{self.port}/"

    def _line(self, limit_s: float) -> str:
        ready, _, _ = select.select([self.proc.stdout], [], [], limit_s)
        assert ready, f"{self.argv} said nothing on stdout within {limit_s} s{self.log()}"
        return self.proc.stdout.readline().decode(errors="replace").strip()

    def log(self) -> str:
        self.stderr.flush()
        text = self.stderr_path.read_text(errors="replace")[-2000:]
        return f"; its stderr: {text}" if text else ""

    def wait(self, limit_s: float) -> float:
        """Seconds until the server exited; fails if it does not within limit_s."""
        start = time.monotonic()
        try:
            self.proc.wait(limit_s)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{self.argv} still runs {limit_s} s after it was told to stop{self.log()}")
        return time.monotonic() - start

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        else:  # the server is gone; what it started must be too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.stdin.close()
        self.proc.stdout.close()
        self.stderr.close()

    def stdout_rest(self) -> bytes:
        """What the server wrote on stdout after its listening line (it has exited)."""
        return self.proc.stdout.read()


@pytest.fixture
def server(request, tmp_path):
    name, variant = request.param
    s = Server(name, variant, tmp_path)
    try:
        yield s
    finally:
        s.stop()
    # The VM's helper (erl_child_setup) ends when it sees the VM gone, a moment later.
    deadline = time.monotonic() + STOP_S
    while (left := marked_command_lines(os.environ[MARKER])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not left, f"left running {STOP_S} s after the server stopped: {left}"


def parametrize_servers():
    return pytest.mark.parametrize("server", [p.values for p in servers()], indirect=True,
                                   ids=[p.id for p in servers()])


# -- the client's side -------------------------------------------------------------------

class User:
    """A joined user: its connection and what it received, gathered by a task of its own."""

    def __init__(self, ws: ClientConnection, group: int, number: int):
        self.ws, self.group, self.number = ws, group, number
        self.received: list[str | bytes] = []
        self.reader = asyncio.create_task(self._read())

    async def _read(self):
        try:
            async for message in self.ws:
                self.received.append(message)
        except ConnectionClosed:  # without a close frame: the server was stopped
            pass


async def join(url: str, group: int, number: int) -> User:
    ws = await connect(url, max_size=None, compression=None, open_timeout=ANSWER_S)
    await ws.send(json.dumps({"join": {"group": group, "user": number, "history": HISTORY}}))
    answer = await asyncio.wait_for(ws.recv(), ANSWER_S)
    assert isinstance(answer, str), f"the join's answer must be a text frame, not {answer!r}"
    assert json.loads(answer) == {"joined": number}, f"user {number} joined, the server said {answer!r}"
    return User(ws, group, number)


async def join_all(url: str) -> list[User]:
    return [await join(url, g, g * USERS_PER_GROUP + i) for g in range(GROUPS) for i in range(USERS_PER_GROUP)]


async def stats(ws: ClientConnection) -> dict:
    await ws.send(json.dumps({"stats": True}))
    answer = await asyncio.wait_for(ws.recv(), ANSWER_S)
    assert isinstance(answer, str), f"stats must answer with a text frame, not {answer!r}"
    found = json.loads(answer)
    assert set(found) >= STATS_KEYS, f"stats lacks {sorted(STATS_KEYS - set(found))}: {answer}"
    for key in STATS_KEYS - {"runtime"}:
        assert isinstance(found[key], int) and found[key] >= 0, f"stats {key} = {found[key]!r}: a count >= 0"
    assert isinstance(found["runtime"], dict) and found["runtime"], f"stats runtime = {found['runtime']!r}"
    for name, value in found["runtime"].items():
        assert name.endswith(UNITS), f"stats runtime {name!r} names no unit ({', '.join(UNITS)})"
        assert isinstance(value, int | float) and value >= 0, f"stats runtime {name} = {value!r}"
    return found


async def until(condition, what: str, limit_s: float = ANSWER_S):
    deadline = time.monotonic() + limit_s
    while not condition():
        assert time.monotonic() < deadline, f"after {limit_s} s: {what}"
        await asyncio.sleep(0.02)


def text_payload(user: User, serial: int, length: int = 0) -> str:
    return json.dumps({"g": user.group, "u": user.number, "t": serial, "m": "x" * length})


def binary_payload(user: User, serial: int, length: int = 0) -> bytes:
    return user.group.to_bytes(4, "big") + user.number.to_bytes(4, "big") + serial.to_bytes(8, "big") + b"y" * length


def sender_of(message: str | bytes) -> tuple[int, int]:
    if isinstance(message, str):
        fields = json.loads(message)
        return fields["g"], fields["u"]
    return int.from_bytes(message[:4], "big"), int.from_bytes(message[4:8], "big")


async def deliveries(users: list[User], sent: list[str | bytes]) -> dict:
    """Waits for every sent message to arrive; checks each arrived once, verbatim, with its
    opcode, at a peer of its sender's group; returns message -> receiver's number."""
    await until(lambda: sum(len(u.received) for u in users) >= len(sent),
                f"{sum(len(u.received) for u in users)} of {len(sent)} messages delivered")
    await asyncio.sleep(QUIET_S)  # a duplicate or a stray would arrive now
    receiver = {}
    for user in users:
        for message in user.received:
            assert message in sent, f"user {user.number} received {message!r:.80}, which nobody sent"
            assert message not in receiver, f"{message!r:.80} was delivered twice"
            group, number = sender_of(message)
            assert number != user.number, f"user {user.number} received its own message"
            assert group == user.group, f"user {user.number} of group {user.group} received group {group}'s"
            receiver[message] = user.number
    assert len(receiver) == len(sent)
    for user in users:
        user.received.clear()
    return receiver


# -- the tests -----------------------------------------------------------------------------

@parametrize_servers()
def test_users_join_and_every_message_reaches_one_peer_of_its_group_verbatim(server):
    async def scenario():
        control = await connect(server.url, compression=None, open_timeout=ANSWER_S)
        before = await stats(control)
        users = await join_all(server.url)
        joined = await stats(control)
        assert joined["connections"] == before["connections"] + len(users), \
            f"connections {before['connections']} before {len(users)} joins, {joined['connections']} after"

        # Every user sends text and binary, short (7-bit lengths), 16-bit and 64-bit ones.
        sent = []
        for user in users:
            for serial, length in enumerate((0, 300, 70_000)):
                for message in (text_payload(user, serial, length), binary_payload(user, serial, length)):
                    sent.append(message)
                    await user.ws.send(message)
        await deliveries(users, sent)

        # One user's many sends spread over the group's other members (a random peer).
        sender = users[0]
        sent = [binary_payload(sender, serial) for serial in range(40)]
        for message in sent:
            await sender.ws.send(message)
        receivers = set((await deliveries(users, sent)).values())
        others = {u.number for u in users if u.group == sender.group and u is not sender}
        assert receivers == others, f"40 sends of user {sender.number} reached {receivers}, not all of {others}"

        # A fragmented message (RFC 6455 5.4) arrives whole, as one message.
        sender = users[GROUPS * USERS_PER_GROUP - 1]
        whole = text_payload(sender, 99, 1000)
        await sender.ws.send([whole[:7], whole[7:500], whole[500:]])
        await deliveries(users, [whole])

        # Pings are answered (RFC 6455 5.5.2) between messages.
        await asyncio.wait_for(await users[1].ws.ping(b"are you there"), ANSWER_S)

        after = await stats(control)
        assert after["cpu_ns"] >= before["cpu_ns"] and after["peak_rss_bytes"] >= after["rss_bytes"] > 0
        for user in users:
            await user.ws.close()
        await until(lambda: all(u.reader.done() for u in users), "the server did not close every connection")
        await control.close()

    run_in_own_loop(scenario)


@parametrize_servers()
def test_a_user_that_closes_leaves_its_group(server):
    async def scenario():
        control = await connect(server.url, compression=None, open_timeout=ANSWER_S)
        users = await join_all(server.url)
        gone, sender, left = users[0], users[1], users[2]
        await gone.ws.close()
        await until(lambda: gone.reader.done(), "the server did not answer the close")
        connections = len(users)

        async def dropped():
            nonlocal connections
            connections = (await stats(control))["connections"]
            return connections

        deadline = time.monotonic() + ANSWER_S
        while await dropped() != len(users) - 1:
            assert time.monotonic() < deadline, f"{connections} connections after one of {len(users)} closed"
            await asyncio.sleep(0.05)
        sent = [text_payload(sender, serial) for serial in range(10)]
        for message in sent:
            await sender.ws.send(message)
        receivers = set((await deliveries(users[1:], sent)).values())
        assert receivers == {left.number}, f"with user {gone.number} gone, the group's messages reached {receivers}"
        await control.close()
        for user in users[1:]:
            await user.ws.close()

    run_in_own_loop(scenario)


@parametrize_servers()
def test_sigterm_ends_the_server_promptly_with_users_connected(server):
    async def scenario():
        users = await join_all(server.url)
        os.kill(server.proc.pid, signal.SIGTERM)
        server.wait(STOP_S)
        await until(lambda: all(u.reader.done() for u in users), "connections still open after the server exited")

    run_in_own_loop(scenario)
    assert server.stdout_rest() == b"", "the server wrote more than its listening line on stdout"


@parametrize_servers()
def test_a_closed_stdin_ends_the_server(server):
    async def scenario():
        await join(server.url, 0, 0)
        server.proc.stdin.close()
        server.wait(STOP_S)

    run_in_own_loop(scenario)


def test_the_registry_declares_a_chat_server():
    """The tests above are parametrised by the registry; an empty one would pass vacuously."""
    assert servers(), "no target declares chat_server"
