/* The socket workload's parameters (spec/workloads/socket.json), read from a request the
 * harness validated. */
#ifndef MSGBENCH_SOCKET_PARAMS_H
#define MSGBENCH_SOCKET_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

typedef enum { SOCKET_ECHO, SOCKET_FLOW } socket_mode;

typedef struct {
    socket_mode mode;
    long long size;        /* payload bytes per message, framing excluded */
    long long total_bytes; /* per socket */
    long long sockets;
    bool remote;           /* placement */
    bool check_content;
    long long port;        /* the server's; 0 = any free port */
    double rate;           /* echo: round trips/s offered by all sockets together, open loop; 0 (absent): closed */
    bool pin_pairs;        /* socket_pins_pairs: from the variant's option pin, not a param */
} socket_params;

/* Reads params into *out. False with *kind and a message for what this target does not
 * implement (data = "list": unsupported) or a params object that is not the harness's
 * (internal). */
bool socket_params_read(const json_value *params, socket_params *out, error_kind *kind, char *message,
                        size_t message_size);

/* The variant's options for socket: pin = "none" | "pair" (socket_pins_pairs), in
 * *pin_option; false with a message (internal) for any other option or value. */
bool socket_options_read(const json_value *options, bool *pin_option, char *message, size_t message_size);

/* Messages per socket: max(1, total_bytes / size). */
long long socket_messages(const socket_params *p);

const char *socket_mode_name(socket_mode mode);

/* Whether a run pins its pairs (socket_pin.h), given the variant's option pin = "pair":
 * in echo only. Echo wakes the other side for every message, which pinning makes a
 * same-CPU hand-over; in flow both threads run flat out, and one CPU for both halves
 * would halve what they can do, so flow keeps to the scheduler. */
bool socket_pins_pairs(const socket_params *p, bool pin_option);

/* Whether the client runs echo in open loop: rate > 0. */
bool socket_open_loop(const socket_params *p);

/* Whether each half runs in one thread (its I/O on the main thread, the watchdog and the
 * server's stdin watch on signals): with one pair. socket_watchdog.h says why. */
bool socket_one_thread(const socket_params *p);

#endif
