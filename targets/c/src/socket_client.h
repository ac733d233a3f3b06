/* The socket workload's client (the worker): seed 002, the Erlang inet driver speed
 * test. It starts the server half, connects `sockets` connections, runs the sequence on
 * each from its own thread, all at once, and reports times and counts. */
#ifndef MSGBENCH_SOCKET_CLIENT_H
#define MSGBENCH_SOCKET_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"
#include "protocol.h"
#include "socket_params.h"

#define SOCKET_MEASURED_COUNT 3 /* closed loop; the open loop adds latency_max_ns */
#define SOCKET_MEASURED_MAX 4
#define SOCKET_VERIFY_COUNT 5

/* The most memory the prepared outgoing frames may take: frames of one value each, for
 * values 1..251 while they fit (the value changes from message to message), at least 2.
 * Half a core's L2 (1 MiB per core on the dev VM's EPYC): a send copies from cache, as
 * iperf3's and sockperf's one reused buffer does; 16 MiB (251 frames at 64 KiB) made
 * every 64 KiB write copy from L3 or memory. Measured on a loaded machine the gain is
 * within the noise (docs/fair-clients.md), so this is for like-with-like, not a claim. */
#define SOCKET_SEND_BUFFER_BUDGET (512 << 10)
#define SOCKET_MAX_SEND_BUFFERS 251

/* Time limits of the conversation with the server. */
#define SOCKET_LISTENING_LIMIT_S 30
#define SOCKET_CONNECT_LIMIT_MS (30 * 1000)
#define SOCKET_SERVED_LIMIT_S 60
#define SOCKET_EXIT_LIMIT_S 10

typedef struct {
    long long messages_per_socket;
    long long messages_sent;      /* frames written completely, all client threads */
    long long bytes_sent;         /* their payload bytes */
    long long messages_received;  /* echo: echoes read back by the clients; flow: the server's count */
    long long bytes_received;     /* payload bytes, counted the same way */
    long long content_mismatches; /* echo: echoes unlike what was sent */
    int64_t wall_ns;              /* gate opened to the last socket done */
    int64_t *elapsed_ns;          /* per socket: first write to last echo / to the ack (malloc'd) */
    long long sockets;            /* elapsed_ns's length */
    int64_t peak_rss_bytes;
    size_t send_buffers;
    bool open_loop;               /* rate > 0: latency is filled in */
    histogram latency;            /* open loop: every round trip from its intended send time, all sockets */
} socket_outcome;

/* Prepared frames: buffers frames of 4 + size bytes each, frame j's payload all of
 * byte j + 1. How many fit SOCKET_SEND_BUFFER_BUDGET (2 to 251). */
size_t socket_send_buffers(long long size);

/* Runs one measurement; request_line (without newline) goes to the server's stdin.
 * False with *kind and a message on failure (also a relayed server error). On success
 * the caller frees out with socket_outcome_free. */
bool socket_run(const socket_params *p, const char *request_line, size_t request_length, socket_outcome *out,
                error_kind *kind, char *message, size_t message_size, FILE *log);

void socket_outcome_free(socket_outcome *o);

/* The raw facts (spec/workloads/socket.json): elapsed_ns (a list, one per socket),
 * wall_ns, peak_rss_bytes, and in open loop latency_max_ns; the harness derives every
 * rate and mean from them. Returns how many it wrote. */
size_t socket_measured(const socket_outcome *o, measured_fact out[SOCKET_MEASURED_MAX]);
void socket_verify(const socket_outcome *o, verify_count out[SOCKET_VERIFY_COUNT]);

#endif
