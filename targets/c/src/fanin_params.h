/* The fanin workload's parameters (spec/workloads/fanin.json), read from a request the
 * harness validated. */
#ifndef MSGBENCH_FANIN_PARAMS_H
#define MSGBENCH_FANIN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

/* The slots of the fixed mix tables: the spec's maxItems. */
#define FANIN_MAX_MIX 8

typedef enum { SIGNAL_MESSAGE, SIGNAL_EXIT_SIGNAL, SIGNAL_KIND_COUNT } signal_kind;

typedef struct {
    double percent;
    signal_kind kind;
    long long size; /* payload length in 64-bit words */
} mix_entry;

typedef struct {
    long long senders;
    long long duration_ms;
    mix_entry mix[FANIN_MAX_MIX];
    size_t mix_length;
    long long memory_limit_mb;
} fanin_params;

/* Reads params into *out. False with *kind and a message for what this target does not
 * implement (exit signals: unsupported) or a params object that is not the harness's
 * (internal). */
bool fanin_params_read(const json_value *params, fanin_params *out, error_kind *kind, char *message,
                       size_t message_size);

#endif
