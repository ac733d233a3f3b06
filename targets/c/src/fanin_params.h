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

/* How a message's payload reaches the receiver (option payload: "slot" or "malloc"). */
typedef enum {
    PAYLOAD_COPY_TO_SLOT, /* copied into the ring cell's slot, which the receiver then owns */
    PAYLOAD_MALLOC,       /* copied into a block malloc'd per send, which the receiver frees */
} fanin_payload;

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

/* The variant's options for fanin: payload = "slot" (when unset) | "malloc", in *payload;
 * false with a message (internal) for any other option or value. */
bool fanin_options_read(const json_value *options, fanin_payload *payload, char *message, size_t message_size);

#endif
