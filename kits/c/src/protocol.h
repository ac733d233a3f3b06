/* The lines a worker writes to stdout (spec/README.md, spec/message.schema.json).
 * Every line is one JSON object followed by a newline, flushed at once so the harness
 * sees hello before the measurement starts. */
#ifndef MSGBENCH_PROTOCOL_H
#define MSGBENCH_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "histogram.h"

typedef enum {
    ERROR_UNSUPPORTED,
    ERROR_RESOURCE,
    ERROR_INTERNAL
} error_kind;

/* One raw fact of a result's `measured` (spec/README.md): a duration in ns, a CPU
 * time in ns, a byte total or a count (the unit is in the name), or a list of them. */
typedef struct {
    const char *name;
    int64_t value;
    const int64_t *list; /* when not NULL: the fact is this list of list_length numbers */
    size_t list_length;
} measured_fact;

typedef struct {
    const char *name;
    long long count;
} verify_count;

/* Writes s as a JSON string literal (quotes included), escaping what JSON requires. */
void json_write_string(FILE *out, const char *s);

void protocol_hello(FILE *out, const char *target, const char *runtime_version, const char *variant);

void protocol_error(FILE *out, error_kind kind, const char *message);

/* One of a result's `histograms` (spec/README.md): sparse [bucket, count] pairs. */
typedef struct {
    const char *name;
    const histogram *counts;
} named_histogram;

/* {"type":"result","measured":{...},"verify":{...}} */
void protocol_result(FILE *out, const measured_fact *measured, size_t measured_count,
                     const verify_count *verify, size_t verify_count_length);

/* The same with ,"histograms":{...} when histogram_count > 0. */
void protocol_result_with_histograms(FILE *out, const measured_fact *measured, size_t measured_count,
                                     const verify_count *verify, size_t verify_count_length,
                                     const named_histogram *histograms, size_t histogram_count);

/* The error kind a peer named ("unsupported", "resource"; anything else is internal). */
error_kind protocol_error_kind(const char *name);

#endif
