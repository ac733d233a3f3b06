/* One worker run (spec/README.md, "The worker protocol"): read the request, write hello,
 * hand the request to its workload, which writes the result or an error. A target names
 * its workloads; the rest is here. */
#ifndef MSGBENCH_WORKER_H
#define MSGBENCH_WORKER_H

#include <stddef.h>
#include <stdio.h>

#include "request.h"

/* Writes exactly one result or error line to out; human logs go to log. */
typedef void (*workload_run)(const worker_request *r, FILE *out, FILE *log);

typedef struct {
    const char *name;
    workload_run run;
} workload_entry;

typedef struct {
    const char *target;
    const char *runtime_version;
    const workload_entry *workloads;
    size_t workload_count;
    /* what the target implements, for the error a workload it lacks gets:
     * "workload \"x\" is not supported: the <target> target implements <implements>" */
    const char *implements;
} worker_spec;

/* Reads one JSON request line from in and answers it on out. Returns the process exit
 * status: 0 whenever an answer (result or error) was written. */
int worker_run(const worker_spec *spec, FILE *in, FILE *out, FILE *log);

#endif
