#define _GNU_SOURCE
#include "workloads.h"

#include <gnu/libc-version.h>

#include "fanin.h"
#include "fanin_params.h"
#include "protocol.h"
#include "socket_client.h"
#include "socket_params.h"
#include "worker.h"

#define MESSAGE_BYTES 1024

static void run_fanin(const worker_request *r, FILE *out, FILE *log)
{
    fanin_payload payload;
    fanin_params p;
    fanin_outcome outcome;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    if (!fanin_options_read(r->options, &payload, message, sizeof message)) {
        protocol_error(out, ERROR_INTERNAL, message);
        return;
    }
    if (!fanin_params_read(r->params, &p, &kind, message, sizeof message) ||
        !fanin_run(&p, payload, &outcome, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
        return;
    }
    measured_fact measured[FANIN_MEASURED_COUNT];
    verify_count verify[FANIN_VERIFY_COUNT];
    fanin_measured(&outcome, measured);
    fanin_verify(&outcome, verify);
    protocol_result(out, measured, FANIN_MEASURED_COUNT, verify, FANIN_VERIFY_COUNT);
    fprintf(log,
            "c fanin%s: senders=%lld queue capacity=%zu sender parks=%llu receiver sleeps=%llu sender wakes=%llu\n",
            r->warmup ? " (warm-up)" : "", p.senders, outcome.queue_capacity,
            (unsigned long long)outcome.queue_stats.sender_parks,
            (unsigned long long)outcome.queue_stats.receiver_sleeps,
            (unsigned long long)outcome.queue_stats.sender_wakes);
}

static void run_socket(const worker_request *r, FILE *out, FILE *log)
{
    bool pin_option;
    socket_params p;
    socket_outcome outcome;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    if (!socket_options_read(r->options, &pin_option, message, sizeof message)) {
        protocol_error(out, ERROR_INTERNAL, message);
        return;
    }
    bool readable = socket_params_read(r->params, &p, &kind, message, sizeof message);
    p.pin_pairs = socket_pins_pairs(&p, pin_option);
    if (!readable ||
        !socket_run(&p, r->line, r->length, &outcome, &kind, message, sizeof message, log)) {
        protocol_error(out, kind, message);
        return;
    }
    measured_fact measured[SOCKET_MEASURED_MAX];
    verify_count verify[SOCKET_VERIFY_COUNT];
    size_t facts = socket_measured(&outcome, measured);
    socket_verify(&outcome, verify);
    const named_histogram latency = {"latency_ns", &outcome.latency};
    protocol_result_with_histograms(out, measured, facts, verify, SOCKET_VERIFY_COUNT, &latency,
                                    outcome.open_loop ? 1 : 0);
    socket_outcome_free(&outcome);
}

int c_worker_main(FILE *in, FILE *out, FILE *log)
{
    static const workload_entry workloads[] = {{"fanin", run_fanin}, {"socket", run_socket}};
    char runtime_version[128];
    snprintf(runtime_version, sizeof runtime_version, "C11 pthreads, gcc %s, glibc %s", __VERSION__,
             gnu_get_libc_version());
    worker_spec spec = {
        .target = "c",
        .runtime_version = runtime_version,
        .workloads = workloads,
        .workload_count = sizeof workloads / sizeof workloads[0],
        .implements = "fanin (N OS threads sending to one consumer thread: the machine's ceiling) and socket "
                      "(plain blocking TCP sockets)",
    };
    return worker_run(&spec, in, out, log);
}
