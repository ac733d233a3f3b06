/* Typed access to a request's params (and options). The harness validated them against
 * the workload spec and filled in every default, so a reader only picks out values: a
 * name that is absent or of another JSON type is a harness bug, reported once as an
 * internal error. */
#ifndef MSGBENCH_PARAMS_H
#define MSGBENCH_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

typedef struct {
    const json_value *object;
    const char *missing;  /* the first name that was absent or mistyped, else NULL */
    const char *expected; /* the type it should have had */
} param_reader;

param_reader param_reader_of(const json_value *object);

/* Each returns the value, or a zero value after noting the name in r->missing. */
long long param_integer(param_reader *r, const char *name);
double param_number(param_reader *r, const char *name);
const char *param_string(param_reader *r, const char *name);
const json_value *param_array(param_reader *r, const char *name);

/* False when a read failed, with "<prefix><name> is absent or not <type> ..." in message. */
bool param_reader_ok(const param_reader *r, const char *prefix, char *message, size_t message_size);

#endif
