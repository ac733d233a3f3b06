"""Memory per connection of a chat server (docs/chat-server.md), by hand: the server's RSS
(from its own stats) before any user, after N idle joined users, and after every user has
sent M messages (so that histories hold up to H payloads each).

    PYTHONPATH=. .venv/bin/python scripts/chat_server_memory.py rust default --users 2000

Prints one JSON line. The file-descriptor limit is raised to its hard limit for this
process and the server it starts (both hold one fd per connection).
"""

import argparse
import asyncio
import contextlib
import json
import os
import resource
import signal
import subprocess
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from msgbench.workers import chat_server, targets

GROUP_SIZE = 10
HISTORY = 10
PAYLOAD = json.dumps({"g": 0, "u": 0, "t": 0, "m": "I've been mad for fucking years\u2014absolutely years"})


async def stats(ws) -> dict:
    await ws.send('{"stats": true}')
    return json.loads(await ws.recv())


async def settle(control, users: int) -> dict:
    """Stats once the server counts every user, a second later (a collector may lag)."""
    while (await stats(control))["connections"] != users:
        await asyncio.sleep(0.2)
    await asyncio.sleep(1)
    return await stats(control)


async def measure(url: str, users: int, messages: int) -> dict:
    control = await connect(url, compression=None)
    before = await settle(control, 0)
    gate = asyncio.Semaphore(64)

    async def join(user: int):
        async with gate:
            ws = await connect(url, compression=None, open_timeout=60, ping_interval=None)
            await ws.send(json.dumps({"join": {"group": user // GROUP_SIZE, "user": user, "history": HISTORY}}))
            await ws.recv()
            return ws

    clients = await asyncio.gather(*(join(u) for u in range(users)))
    idle = await settle(control, users)
    delivered = 0
    everything = asyncio.Event()

    async def read(ws):  # every message reaches one peer: count them all in
        nonlocal delivered
        with contextlib.suppress(ConnectionClosed):
            async for _ in ws:
                delivered += 1
                if delivered == users * messages:
                    everything.set()

    readers = [asyncio.create_task(read(ws)) for ws in clients]
    for _ in range(messages):
        await asyncio.gather(*(ws.send(PAYLOAD) for ws in clients))
    if messages:
        await asyncio.wait_for(everything.wait(), 120)
    busy = await settle(control, users)
    for ws in clients:
        await ws.close()
    await asyncio.gather(*readers)
    await control.close()

    def per_user(a: dict, b: dict) -> int:
        return round((b["rss_bytes"] - a["rss_bytes"]) / users)

    return {"users": users, "rss_before_bytes": before["rss_bytes"], "rss_idle_bytes": idle["rss_bytes"],
            "rss_after_messages_bytes": busy["rss_bytes"], "peak_rss_bytes": busy["peak_rss_bytes"],
            "idle_per_user_bytes": per_user(before, idle), "after_messages_per_user_bytes": per_user(before, busy),
            "runtime_idle": idle["runtime"], "runtime_after_messages": busy["runtime"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target")
    parser.add_argument("variant")
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--messages", type=int, default=HISTORY, help="messages each user sends after the idle count")
    args = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    t = targets.target(args.target)
    command, serving = chat_server.command(t), [v.name for v in chat_server.serving_variants(t)]
    if not command:
        print(f"target {args.target!r} declares no chat_server", file=sys.stderr)
        return 2
    if args.variant not in serving:
        print(f"variant {args.variant!r}: {args.target} serves chat with {serving}", file=sys.stderr)
        return 2
    v = t.variants[args.variant]
    program = str(t.folder / command[0]) if "/" in command[0] else command[0]
    server = subprocess.Popen([program, *command[1:], *v.args, "--listen", "127.0.0.1:0"], cwd=t.folder,
                              env=t.worker_env(v), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              start_new_session=True)
    try:
        port = json.loads(server.stdout.readline())["listening"]
        found = asyncio.run(measure(f"ws://127.0.0.1:{port}/", args.users, args.messages))
    finally:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    print(json.dumps({"target": args.target, "variant": args.variant, **found}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
