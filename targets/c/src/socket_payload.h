/* The check of an echoed payload: every byte of it. */
#ifndef MSGBENCH_SOCKET_PAYLOAD_H
#define MSGBENCH_SOCKET_PAYLOAD_H

#include <stdbool.h>
#include <stddef.h>

/* True when each of the n bytes at p is value. A message's payload is size bytes of one
 * value (spec: socket, "Framing"), so this is the same check as memcmp() with the frame
 * that was sent, and it reads half the memory: at 64 KiB it takes ~0.6 us where memcmp
 * takes ~1.15 us, a round trip's 34 us pinned (docs/measurements/issue-13-socket.md). */
bool payload_is_all(const unsigned char *p, size_t n, unsigned char value);

#endif
