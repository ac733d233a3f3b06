/* The lines a worker writes to stdout (spec/README.md, spec/message.schema.json).
 * Every line is one JSON object followed by a newline, flushed at once so the harness
 * sees hello before the measurement starts. */
#ifndef MSGBENCH_PROTOCOL_H
#define MSGBENCH_PROTOCOL_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    ERROR_BAD_PARAMS,
    ERROR_UNSUPPORTED,
    ERROR_RESOURCE,
    ERROR_INTERNAL
} error_kind;

typedef struct {
    const char *name; /* unit in the name, as in spec/workloads/<workload>.json */
    double value;
} metric;

typedef struct {
    const char *name;
    long long count;
} verify_count;

/* Writes s as a JSON string literal (quotes included), escaping what JSON requires. */
void json_write_string(FILE *out, const char *s);

void protocol_hello(FILE *out, const char *target, const char *runtime_version, const char *variant);

void protocol_error(FILE *out, error_kind kind, const char *message);

void protocol_result(FILE *out, const metric *metrics, size_t metric_count,
                     const verify_count *verify, size_t verify_count_length);

#endif
