/* The request line a worker reads (spec/README.md, "The worker protocol"). */
#ifndef MSGBENCH_REQUEST_H
#define MSGBENCH_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json.h"

typedef struct {
    char *line; /* without its newline: a worker may pass it on (the socket server half) */
    size_t length;
    json_value *json;
    const char *workload;
    const char *variant;
    const json_value *params;
    const json_value *options;
    bool warmup;
} worker_request;

/* Reads and picks apart one request line (a worker's, or a server half's, which gets the
 * same line). False with a message; r->variant is set whenever the line had one.
 * Release with request_free, also after a failure. */
bool request_read(FILE *in, worker_request *r, char *message, size_t message_size);
void request_free(worker_request *r);

#endif
