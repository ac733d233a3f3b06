/* One worker run: read the request, answer per the protocol (spec/README.md). */
#ifndef MSGBENCH_WORKER_H
#define MSGBENCH_WORKER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "json.h"

#define WORKER_TARGET "c"

/* Reads one JSON request line from in, writes JSON lines to out and human logs to log.
 * Returns the process exit status: 0 whenever an answer (result or error) was written. */
int worker_main(FILE *in, FILE *out, FILE *log);

/* Reads up to the first newline (or end of input). NULL with *too_long set if the line
 * exceeds the request limit (4 MiB), or on allocation failure. Shared with the socket
 * server, which reads the same request. */
char *worker_read_request_line(FILE *in, size_t *length, bool *too_long);

/* Checks the request envelope (request.schema.json) and picks out the workload and the
 * variant; false after writing an error to out. */
bool worker_check_request(FILE *out, const json_value *request, const char **workload, const char **variant);

#endif
