/* The fanin workload's parameters (spec/workloads/fanin.json), checked and decoded. */
#ifndef MSGBENCH_FANIN_PARAMS_H
#define MSGBENCH_FANIN_PARAMS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

/* The most threads this target runs: it must equal max_processes in target.toml (a
 * test checks). The workload needs senders + 1 threads, so senders <= this - 1.
 * Why 4096: every sender is a kernel thread, and this machine's pid_max (32768) and
 * threads-max bound all threads system-wide; beyond a few thousand threads on a few
 * cores the run measures the kernel scheduler rather than the queue, and the seed
 * sweeps only up to 64 senders. */
#define FANIN_MAX_THREADS 4096

#define FANIN_MAX_MIX 8

typedef enum { SIGNAL_MESSAGE, SIGNAL_EXIT_SIGNAL, SIGNAL_KIND_COUNT } signal_kind;

typedef enum { METHOD_MSGBENCH, METHOD_OTP } fanin_method;

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
    fanin_method method;
    long long memory_limit_mb;
} fanin_params;

/* Checks params (a JSON object) against the workload spec and decodes it into *out.
 * On failure returns false with *kind (bad_params or unsupported) and a message that
 * names the parameter, the value given and what is accepted. */
bool fanin_params_decode(const json_value *params, fanin_params *out, error_kind *kind,
                         char *message, size_t message_size);

const char *signal_kind_name(signal_kind kind);

#endif
