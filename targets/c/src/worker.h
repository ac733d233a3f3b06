/* One worker run: read the request, answer per the protocol (spec/README.md). */
#ifndef MSGBENCH_WORKER_H
#define MSGBENCH_WORKER_H

#include <stdio.h>

#define WORKER_TARGET "c"

/* Reads one JSON request line from in, writes JSON lines to out and human logs to log.
 * Returns the process exit status: 0 whenever an answer (result or error) was written. */
int worker_main(FILE *in, FILE *out, FILE *log);

#endif
