/* One worker run: read the request, answer per the protocol (spec/README.md). */
#ifndef MSGBENCH_WORKER_H
#define MSGBENCH_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fanin.h"
#include "json.h"

#define WORKER_TARGET "c"

/* The request line and what the workers read of it (spec/README.md, "The worker protocol"). */
typedef struct {
    char *line; /* without its newline: the socket worker passes it on to its server */
    size_t length;
    json_value *json;
    const char *workload;
    const char *variant;
    const json_value *params;
    const json_value *options;
    bool warmup;
} worker_request;

/* The options target.toml's variants set (spec/README.md: an option this worker does
 * not know is an internal error). */
typedef struct {
    fanin_payload payload; /* payload = "slot" | "malloc": how fanin hands a payload over */
    bool has_payload;
    bool pin_pairs; /* pin = "pair": socket's client and server thread of each pair on one CPU */
} worker_options;

/* Reads one JSON request line from in, writes JSON lines to out and human logs to log.
 * Returns the process exit status: 0 whenever an answer (result or error) was written. */
int worker_main(FILE *in, FILE *out, FILE *log);

/* Reads and picks apart the request line (the worker's, and the socket server's, which
 * gets the same line). False with a message; r->variant is set whenever the line had
 * one. Release with request_free, also after a failure. */
bool request_read(FILE *in, worker_request *r, char *message, size_t message_size);
void request_free(worker_request *r);

/* r's options. False with a message (internal) for an option this worker does not know. */
bool worker_options_read(const worker_request *r, worker_options *out, char *message, size_t message_size);

#endif
