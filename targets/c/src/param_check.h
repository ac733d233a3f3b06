/* What the workloads' parameter checks share (fanin_params.c, socket_params.c): a
 * complaint (the error kind and message a decoder fills in), the check that every
 * parameter given is one of the workload's, and decoders for an integer in a range and
 * for one of two strings. Every decoder returns true, or false with the complaint
 * filled in. */
#ifndef MSGBENCH_PARAM_CHECK_H
#define MSGBENCH_PARAM_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

typedef struct {
    error_kind *kind;
    char *message;
    size_t message_size;
} param_complaint;

/* Sets the complaint's kind and message; returns false. */
bool param_reject(param_complaint *c, error_kind kind, const char *format, ...)
    __attribute__((format(printf, 3, 4)));

/* params must be a JSON object whose keys are all among names[0..count): else
 * "X is not a parameter of <workload>: its parameters are a, b and c". */
bool param_check_names(param_complaint *c, const json_value *params, const char *workload,
                       const char *const *names, size_t count);

/* params[name], an integer in [min, max]. why is appended to the out-of-range message
 * ("" for nothing). */
bool param_integer(param_complaint *c, const json_value *params, const char *name, long long min,
                   long long max, const char *why, long long *out);

/* params[name], one of two strings: *out = 0 for first, 1 for second. */
bool param_choice(param_complaint *c, const json_value *params, const char *name, const char *first,
                  const char *second, int *out);

#endif
