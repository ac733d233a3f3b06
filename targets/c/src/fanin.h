/* The fanin workload (seed 000, OTP's parallel_messages_SUITE): N sender threads send
 * to one receiver thread over a bounded MPSC queue for duration_ms. */
#ifndef MSGBENCH_FANIN_H
#define MSGBENCH_FANIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fanin_params.h"
#include "mpsc_queue.h"
#include "protocol.h"

/* Messages the ring between the senders and the receiver holds, unless large messages
 * ask for fewer (see fanin_queue_capacity). 1024 lets the receiver drain long runs
 * without waiting and a woken sender send hundreds of messages per wake-up, while a
 * backlog of 1024 small messages is a few tens of KiB. (256 measured slower with many
 * senders; 4096 no faster.) */
#define FANIN_QUEUE_CAPACITY 1024

/* The most payload bytes the ring may hold: a ring of 1024 slots of 8 MB (the largest
 * size, 1M words) would be 8 GB, and for messages that large a few dozen slots keep the
 * receiver busy just as well. */
#define FANIN_QUEUE_PAYLOAD_BYTES (256u << 20)

#define FANIN_MEASURED_COUNT 5
#define FANIN_VERIFY_COUNT 5

typedef struct {
    long long sent[SIGNAL_KIND_COUNT];     /* the senders' own counts, summed */
    long long received[SIGNAL_KIND_COUNT]; /* the receiver's counts */
    long long receiver_alive;              /* 1 once the receiver reported */
    int64_t start_ns;                      /* senders released */
    int64_t senders_stopped_ns;            /* every sender reported its counts */
    int64_t last_receive_ns;               /* the receiver saw the last end marker */
    int64_t cpu_ns;                        /* process CPU from release to last receive */
    int64_t peak_rss_bytes;
    size_t queue_capacity;
    mpsc_queue_stats queue_stats;
} fanin_outcome;

/* The ring capacity for these params: FANIN_QUEUE_CAPACITY, halved until the ring holds
 * at most FANIN_QUEUE_PAYLOAD_BYTES of the mix's largest messages and every message that
 * can exist at once (the ring, one being built by each sender, one held by the
 * receiver) fits in memory_limit_mb. 0 if not even a ring of 2 fits the limit. */
size_t fanin_queue_capacity(const fanin_params *p);

/* Runs one measurement. On failure returns false with *kind (resource or internal) and
 * a message. */
bool fanin_run(const fanin_params *p, fanin_payload payload, fanin_outcome *out, error_kind *kind,
               char *message, size_t message_size);

/* The raw facts of an outcome (spec/workloads/fanin.json): send_ns, receive_ns, drain_ns,
 * cpu_ns, peak_rss_bytes; the harness derives every rate and duration from them. */
void fanin_measured(const fanin_outcome *o, measured_fact out[FANIN_MEASURED_COUNT]);

void fanin_verify(const fanin_outcome *o, verify_count out[FANIN_VERIFY_COUNT]);

#endif
