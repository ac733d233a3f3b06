/* The socket workload's parameters (spec/workloads/socket.json), checked and decoded. */
#ifndef MSGBENCH_SOCKET_PARAMS_H
#define MSGBENCH_SOCKET_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

/* The spec's upper bound on sockets. Each socket is one client thread in the worker and
 * one handler thread in the server: 2 * 1024 + 2 threads fit max_processes (4096). */
#define SOCKET_MAX_SOCKETS 1024

typedef enum { SOCKET_ECHO, SOCKET_FLOW } socket_mode;

typedef struct {
    socket_mode mode;
    long long size;        /* payload bytes per message, framing excluded */
    long long total_bytes; /* per socket */
    long long sockets;
    bool remote;           /* placement */
    bool check_content;
    long long port;        /* the server's; 0 = any free port */
} socket_params;

/* Checks params (a JSON object) against the workload spec and decodes it into *out.
 * On failure returns false with *kind (bad_params or unsupported) and a message that
 * names the parameter, the value given and what is accepted. */
bool socket_params_decode(const json_value *params, socket_params *out, error_kind *kind, char *message,
                          size_t message_size);

/* Messages per socket: max(1, total_bytes / size). */
long long socket_messages(const socket_params *p);

const char *socket_mode_name(socket_mode mode);

#endif
