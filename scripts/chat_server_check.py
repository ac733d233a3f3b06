"""A hand check of one chat server (docs/chat-server.md) with many connections, through a
maintained WebSocket client (Python websockets): the server's memory per joined, idle
connection (its stats before and after the joins), then optionally a light realistic load
(every user sends every think_s seconds from a random phase), every delivery checked.

It is not the benchmark (the Go load generator is, through `msgbench run chat -p
server=ws`); it measures what a target's `per_connection_bytes` estimate should be, and
shows a server holds N connections. The client is one Python process: it, not the
server, limits the load it can offer (it says its own CPU).

    python scripts/chat_server_check.py --target erlang --users 2000 --load-s 10
"""

import argparse
import asyncio
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time

from websockets.asyncio.client import connect

from msgbench.workers import chat_server, targets


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--variant", default="")
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--per-group", type=int, default=10)
    parser.add_argument("--sources", type=int, default=8, help="source addresses 127.0.0.1..N")
    parser.add_argument("--load-s", type=float, default=0, help="seconds of realistic load after the joins")
    parser.add_argument("--think-s", type=float, default=1.0)
    args = parser.parse_args()
    t = targets.target(args.target)
    command = chat_server.command(t)
    if not command:
        parser.error(f"--target {args.target}: declares no chat_server in its target.toml")
    variant = t.variants[args.variant or t.extra[chat_server.VARIANTS][0]]
    needed = args.users + 200  # one per connection, in this process and (inherited) in the server
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if needed > hard:
        parser.error(f"--users {args.users}: needs ~{needed} file descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, needed), hard))
    targets.build(t)
    program = str(t.folder / command[0]) if "/" in command[0] else command[0]
    server = subprocess.Popen([program, *command[1:], *variant.args, "--listen", "0.0.0.0:0"],
                              cwd=t.folder, env=t.worker_env(variant), stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, start_new_session=True)
    try:
        port = json.loads(server.stdout.readline())["listening"]
        report = asyncio.run(check(port, args, server))
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    report |= {"target": t.name, "variant": variant.name, "users": args.users}
    print(json.dumps(report, indent=1))
    return 0


async def check(port: int, args, server: subprocess.Popen) -> dict:
    url = f"ws://127.0.0.1:{port}/"
    control = await connect(url, compression=None)

    async def stats() -> dict:
        await control.send(json.dumps({"stats": True}))
        return json.loads(await control.recv())

    before = await stats()
    received: list[int] = [0, 0]  # deliveries, misdeliveries (own group's peer check)

    async def user(number: int, joined: asyncio.Event, stop: asyncio.Event, sent: list):
        group = number // args.per_group
        source = f"127.0.0.{1 + number % args.sources}"
        async with connect(url, compression=None, local_addr=(source, 0), open_timeout=120) as ws:
            await ws.send(json.dumps({"join": {"group": group, "user": number, "history": 10}}))
            assert json.loads(await ws.recv()) == {"joined": number}
            joined.set()

            async def read():
                async for message in ws:
                    fields = json.loads(message)
                    received[0] += 1
                    received[1] += fields["g"] != group or fields["u"] == number

            reader = asyncio.create_task(read())
            await stop.wait()  # the load phase starts when every user has joined
            deadline = time.monotonic() + args.load_s
            next_send = time.monotonic() + random.uniform(0, args.think_s)
            while next_send < deadline:
                await asyncio.sleep(max(0.0, next_send - time.monotonic()))
                await ws.send(json.dumps({"g": group, "u": number, "t": time.monotonic_ns(), "m": "hello"}))
                sent[0] += 1
                next_send += args.think_s
            drain_until = deadline + 30  # every delivery, or 30 s: the client is slower than the server
            while (received[0] < sent[0] or time.monotonic() < deadline) and time.monotonic() < drain_until:
                await asyncio.sleep(0.1)
            reader.cancel()

    start = time.monotonic()
    cpu_start = time.process_time()
    events = [asyncio.Event() for _ in range(args.users)]
    go = asyncio.Event()
    sent = [0]
    tasks = []
    for number, event in enumerate(events):
        tasks.append(asyncio.create_task(user(number, event, go, sent)))
        if number % 500 == 499:  # joins in waves, as a backlog allows
            await asyncio.gather(*(e.wait() for e in events[number - 499:number + 1]))
    await asyncio.gather(*(e.wait() for e in events))
    connect_s = time.monotonic() - start
    await asyncio.sleep(1)  # the server settles
    joined = await stats()
    go.set()
    if args.load_s:
        await asyncio.gather(*tasks)
    after = await stats()
    # SIGTERM: how long the server takes to exit (idle, --load-s 0: with every user connected).
    # A thread waits for the exit: the event loop is busy with thousands of closing sockets.
    stopping = time.monotonic()
    os.killpg(server.pid, signal.SIGTERM)
    await asyncio.to_thread(server.wait)
    stop_s = time.monotonic() - stopping
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, control.close(), return_exceptions=True)
    report = {
        "connect_and_join_s": round(connect_s, 1),
        "server_connections": joined["connections"],
        "server_rss_before_bytes": before["rss_bytes"],
        "server_rss_joined_bytes": joined["rss_bytes"],
        "rss_per_connection_bytes": round((joined["rss_bytes"] - before["rss_bytes"]) / args.users),
        "server_peak_rss_bytes": after["peak_rss_bytes"],
        "client_cpu_s": round(time.process_time() - cpu_start, 1),
        "sigterm_to_exit_s": round(stop_s, 2),
    }
    report["runtime_per_connection"] = {  # the runtime's own view, by kind
        name: round((value - before["runtime"].get(name, 0)) / args.users)
        for name, value in joined["runtime"].items() if name.endswith("_bytes") and "_io_" not in name}
    if args.load_s:
        report |= {"sent": sent[0], "received": received[0], "misdelivered": received[1],
                   "server_cpu_during_load_s": round((after["cpu_ns"] - joined["cpu_ns"]) / 1e9, 1)}
    return report


if __name__ == "__main__":
    sys.exit(main())
