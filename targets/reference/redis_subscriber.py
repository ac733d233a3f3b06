"""A reference subscriber for redis-benchmark's PUBLISH run: the fair pairing (issue 13).

    python3 redis_subscriber.py HOST PORT CHANNEL PAYLOAD_BYTES EXPECTED IDLE_MS

redis-benchmark only publishes; msgbench's redis target also has the broker deliver every
message to a receiver on the same cores. This process is that receiver for the tool's run:
it SUBSCRIBEs to CHANNEL, prints "subscribed" once Redis confirmed it, then reads the
socket in 1 MiB reads without parsing: every message Redis pushes for a PUBLISH of
PAYLOAD_BYTES on CHANNEL is the same RESP frame, so the count is bytes / frame length
(a partial frame left over, or bytes that are not a whole number of frames at the end,
are reported). It ends at EXPECTED messages, at IDLE_MS without a byte after the first,
or when Redis closes the connection (a subscriber past its output buffer limit), and
prints one JSON line: received, first_ns and last_ns (CLOCK_MONOTONIC of the first and
last read that brought data), leftover_bytes. Standard library only.
"""

import json
import socket
import sys
import time

CHUNK = 1 << 20


def frame_bytes(channel: str, payload_bytes: int) -> int:
    """The length of Redis's push for one message: *3 $7 message $len channel $len payload."""
    return len(f"*3\r\n$7\r\nmessage\r\n${len(channel)}\r\n{channel}\r\n${payload_bytes}\r\n") + payload_bytes + 2


def subscribe_reply(channel: str) -> bytes:
    return f"*3\r\n$9\r\nsubscribe\r\n${len(channel)}\r\n{channel}\r\n:1\r\n".encode()


def main(argv: list[str]) -> int:
    if len(argv) != 6:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    host, port, channel = argv[0], int(argv[1]), argv[2]
    payload_bytes, expected, idle_s = int(argv[3]), int(argv[4]), int(argv[5]) / 1000
    frame = frame_bytes(channel, payload_bytes)
    sock = socket.create_connection((host, port), timeout=30)
    sock.sendall(f"*2\r\n$9\r\nSUBSCRIBE\r\n${len(channel)}\r\n{channel}\r\n".encode())
    want, got = subscribe_reply(channel), b""
    while len(got) < len(want):
        more = sock.recv(len(want) - len(got))
        if not more:
            print(f"redis closed the connection before confirming SUBSCRIBE {channel}", file=sys.stderr)
            return 1
        got += more
    if got != want:
        print(f"unexpected reply to SUBSCRIBE {channel}: {got!r}", file=sys.stderr)
        return 1
    print("subscribed", flush=True)
    buf = bytearray(CHUNK)
    view = memoryview(buf)
    total, first_ns, last_ns = 0, 0, 0
    sock.settimeout(None)
    while total < expected * frame:
        if first_ns:
            sock.settimeout(idle_s)  # after the first byte: the run's end is idle_s without one
        try:
            n = sock.recv_into(view)
        except TimeoutError:
            break
        if n == 0:
            break
        last_ns = time.monotonic_ns()
        first_ns = first_ns or last_ns
        total += n
    sock.close()
    print(json.dumps({"received": total // frame, "first_ns": first_ns, "last_ns": last_ns,
                      "leftover_bytes": total % frame}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
