#define _GNU_SOURCE
#include "fanin.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "measure.h"

/* The end marker a sender sends after its last message; other tags are signal kinds. */
#define TAG_SENDER_DONE UINT32_MAX

/* Senders and the receiver only loop over plain calls: a small stack keeps 4095 threads'
 * address-space reservation (and page tables) small. */
#define THREAD_STACK_BYTES (256 * 1024)

/* Spins (a pause each, 25 ns on this machine's CPU) a sender waits for room before
 * parking: enough to ride out a ring that is full for a moment. Waiting longer does not
 * pay: the receiver wakes parked senders in batches of half a ring, so a park costs a
 * few microseconds per ~500 messages, while a spinning sender holds a core the receiver
 * may need (measured: spinning 0, 16, 64 or 256 times made no difference beyond the
 * noise with idle cores, and longer spins were slower when other processes were busy). */
#define SEND_SPIN_LIMIT 16

/* Everything one measurement shares between the coordinator (the calling thread), the
 * senders and the receiver. */
typedef struct {
    mpsc_queue queue;

    /* read-only once threads run */
    fanin_payload payload;
    size_t mix_length;
    double cumulative_probability[FANIN_MAX_MIX]; /* as OTP's CalculateOpsProbHelpTab */
    signal_kind kind[FANIN_MAX_MIX];
    size_t words[FANIN_MAX_MIX];
    uint64_t *prototype[FANIN_MAX_MIX]; /* the list 1..size each send copies */

    alignas(MPSC_CACHE_LINE) _Atomic bool stop;

    /* start gate and reports, under lock */
    alignas(MPSC_CACHE_LINE) pthread_mutex_t lock;
    pthread_cond_t gate_opened;     /* senders and the receiver wait on it */
    pthread_cond_t coordinator_cue; /* "all ready", "all reported" */
    bool gate_open;
    long long ready;
    long long reported;
    long long senders; /* threads actually started = end markers the receiver awaits */
    long long sent[SIGNAL_KIND_COUNT];
    bool out_of_memory;

    /* written by the receiver before it exits, read after join */
    long long received[SIGNAL_KIND_COUNT];
    int64_t last_receive_ns;
    long long receiver_alive;
} fanin_state;

typedef struct {
    alignas(MPSC_CACHE_LINE) pthread_t thread;
    fanin_state *state;
    uint64_t rng;
} sender_thread;

/* xorshift64* (Vigna): a tiny per-thread generator, so picking a kind is not a shared
 * point of contention. */
static inline uint64_t next_random(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * UINT64_C(0x2545F4914F6CDD1D);
}

/* Uniform in [0, 1), like rand:uniform() minus its exclusion of 0. */
static inline double next_uniform(uint64_t *state)
{
    return (double)(next_random(state) >> 11) * 0x1.0p-53;
}

/* splitmix64: spreads consecutive seeds into unrelated, non-zero xorshift states. */
static uint64_t seed_for(uint64_t n)
{
    uint64_t z = n + UINT64_C(0x9E3779B97F4A7C15);
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    z ^= z >> 31;
    return z != 0 ? z : 1;
}

/* As OTP's get_op: the first entry whose cumulative probability exceeds u; the last
 * entry takes the rest, so rounding in the cumulative sums never loses a pick. */
static inline size_t pick_mix_entry(const fanin_state *s, double u)
{
    for (size_t i = 0; i + 1 < s->mix_length; i++) {
        if (u < s->cumulative_probability[i]) {
            return i;
        }
    }
    return s->mix_length - 1;
}

/* Called by senders and the receiver: announce readiness, then wait for the start. */
static void wait_for_start(fanin_state *s)
{
    pthread_mutex_lock(&s->lock);
    s->ready++;
    pthread_cond_signal(&s->coordinator_cue);
    while (!s->gate_open) {
        pthread_cond_wait(&s->gate_opened, &s->lock);
    }
    pthread_mutex_unlock(&s->lock);
}

static void report_sent(fanin_state *s, const long long sent[SIGNAL_KIND_COUNT], bool out_of_memory)
{
    pthread_mutex_lock(&s->lock);
    for (int k = 0; k < SIGNAL_KIND_COUNT; k++) {
        s->sent[k] += sent[k];
    }
    s->out_of_memory = s->out_of_memory || out_of_memory;
    if (++s->reported == s->senders) {
        pthread_cond_signal(&s->coordinator_cue);
    }
    pthread_mutex_unlock(&s->lock);
}

static void *sender_main(void *arg)
{
    sender_thread *self = arg;
    fanin_state *s = self->state;
    uint64_t rng = self->rng;
    long long sent[SIGNAL_KIND_COUNT] = {0};
    bool out_of_memory = false;

    wait_for_start(s);
    do {
        size_t entry = pick_mix_entry(s, next_uniform(&rng));
        size_t words = s->words[entry];
        /* The receiver gets its own copy, as an Erlang message is copied to the
         * receiver: into the ring's slot, or into a fresh block the receiver frees. */
        if (s->payload == PAYLOAD_COPY_TO_SLOT) {
            mpsc_queue_send_copy(&s->queue, s->kind[entry], s->prototype[entry], words);
        } else {
            uint64_t *payload = malloc(words * sizeof *payload);
            if (payload == NULL) {
                out_of_memory = true;
                atomic_store_explicit(&s->stop, true, memory_order_relaxed);
                break;
            }
            memcpy(payload, s->prototype[entry], words * sizeof *payload);
            mpsc_message message = {.tag = s->kind[entry], .words = words, .payload = payload};
            mpsc_queue_send(&s->queue, &message);
        }
        sent[s->kind[entry]]++;
    } while (!atomic_load_explicit(&s->stop, memory_order_relaxed));

    report_sent(s, sent, out_of_memory);
    mpsc_message done = {.tag = TAG_SENDER_DONE, .words = 0, .payload = NULL};
    mpsc_queue_send(&s->queue, &done);
    return NULL;
}

static void *receiver_main(void *arg)
{
    fanin_state *s = arg;
    long long received[SIGNAL_KIND_COUNT] = {0};
    long long senders_done = 0;

    wait_for_start(s); /* after it, s->senders is final */
    while (senders_done < s->senders) {
        mpsc_message message;
        mpsc_queue_receive(&s->queue, &message);
        if (message.tag == TAG_SENDER_DONE) {
            senders_done++;
            continue;
        }
        received[message.tag]++;
        if (s->payload == PAYLOAD_MALLOC) {
            free(message.payload);
        }
        /* else the payload is in the ring slot the receiver holds until its next
         * receive; like the OTP suite's receiver, it does not look inside */
    }
    s->last_receive_ns = monotonic_ns();
    memcpy(s->received, received, sizeof received);
    s->receiver_alive = 1;
    return NULL;
}

static size_t largest_words(const fanin_params *p)
{
    size_t largest = 0;
    for (size_t i = 0; i < p->mix_length; i++) {
        if ((size_t)p->mix[i].size > largest) {
            largest = (size_t)p->mix[i].size;
        }
    }
    return largest;
}

size_t fanin_queue_capacity(const fanin_params *p)
{
    uint64_t limit_bytes = (uint64_t)p->memory_limit_mb << 20;
    uint64_t message_bytes = largest_words(p) * sizeof(uint64_t);
    for (size_t capacity = FANIN_QUEUE_CAPACITY; capacity >= 2; capacity /= 2) {
        uint64_t at_once = capacity + (uint64_t)p->senders + 1;
        bool ring_fits = capacity * message_bytes <= FANIN_QUEUE_PAYLOAD_BYTES;
        if (ring_fits && at_once * message_bytes <= limit_bytes) {
            return capacity;
        }
    }
    return 0;
}

/* aligned_alloc wants a size that is a multiple of the alignment */
static size_t round_up_to_cache_line(size_t bytes)
{
    return (bytes + MPSC_CACHE_LINE - 1) / MPSC_CACHE_LINE * MPSC_CACHE_LINE;
}

static bool prepare(fanin_state *s, const fanin_params *p, fanin_payload payload, size_t capacity)
{
    double cumulative = 0.0;
    s->payload = payload;
    s->mix_length = p->mix_length;
    for (size_t i = 0; i < p->mix_length; i++) {
        cumulative += p->mix[i].percent / 100.0;
        s->cumulative_probability[i] = cumulative;
        s->kind[i] = p->mix[i].kind;
        s->words[i] = (size_t)p->mix[i].size;
        s->prototype[i] = malloc(s->words[i] * sizeof(uint64_t));
        if (s->prototype[i] == NULL) {
            return false;
        }
        for (size_t w = 0; w < s->words[i]; w++) {
            s->prototype[i][w] = w + 1; /* lists:seq(1, Size) */
        }
    }
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    int cpus = online > 0 ? (int)online : 1;
    mpsc_queue_config config = {
        .capacity = capacity,
        .slot_words = payload == PAYLOAD_COPY_TO_SLOT ? largest_words(p) : 0,
        /* The receiver keeps one core busy; waking more parked senders than there are
         * cores left to run them only adds context switches (measured with 64 senders
         * on 2 cores: waking 1 ran up to 2x faster than waking 2 and ~10x faster than
         * waking all). The rest wait their turn in FIFO order. */
        .senders_to_wake = cpus > 1 ? cpus - 1 : 1,
        .send_spin_limit = SEND_SPIN_LIMIT,
    };
    return mpsc_queue_init(&s->queue, &config) == 0;
}

static void release_prototypes(fanin_state *s)
{
    for (size_t i = 0; i < s->mix_length; i++) {
        free(s->prototype[i]);
    }
}

static bool fail(error_kind *kind, char *message, size_t size, error_kind k, const char *format, ...)
    __attribute__((format(printf, 5, 6)));

static bool fail(error_kind *kind, char *message, size_t size, error_kind k, const char *format, ...)
{
    *kind = k;
    va_list args;
    va_start(args, format);
    vsnprintf(message, size, format, args);
    va_end(args);
    return false;
}

/* Start: one thread per sender, each with its own generator. A sender that cannot
 * start stops the run: the started ones send once, see the stop and end normally. */
static bool start_senders(fanin_state *s, const fanin_params *p, sender_thread *senders,
                          const pthread_attr_t *attributes, long long *started, error_kind *kind, char *message,
                          size_t message_size)
{
    uint64_t seed_base = (uint64_t)monotonic_ns();
    for (*started = 0; *started < p->senders; (*started)++) {
        sender_thread *sender = &senders[*started];
        sender->state = s;
        sender->rng = seed_for(seed_base + (uint64_t)*started);
        int error = pthread_create(&sender->thread, attributes, sender_main, sender);
        if (error != 0) {
            atomic_store_explicit(&s->stop, true, memory_order_relaxed);
            return fail(kind, message, message_size, ERROR_RESOURCE,
                        "could not start sender thread %lld of %lld: %s (threads limit)", *started + 1,
                        p->senders, strerror(error));
        }
    }
    return true;
}

/* The window: once every thread is ready, open the gate, let the senders send for
 * duration_ms (not at all if a sender did not start), stop them and wait until each
 * has reported. Returns the process CPU time at the start. */
static int64_t run_window(fanin_state *s, const fanin_params *p, long long started, bool ok, fanin_outcome *out)
{
    pthread_mutex_lock(&s->lock);
    s->senders = started;
    while (s->ready < started + 1) {
        pthread_cond_wait(&s->coordinator_cue, &s->lock);
    }
    int64_t cpu_start = process_cpu_ns();
    out->start_ns = monotonic_ns();
    s->gate_open = true;
    pthread_cond_broadcast(&s->gate_opened);
    pthread_mutex_unlock(&s->lock);

    if (ok) {
        sleep_until_ns(out->start_ns + (int64_t)p->duration_ms * INT64_C(1000000));
    }
    atomic_store_explicit(&s->stop, true, memory_order_relaxed);

    pthread_mutex_lock(&s->lock);
    while (s->reported < started) {
        pthread_cond_wait(&s->coordinator_cue, &s->lock);
    }
    out->senders_stopped_ns = monotonic_ns();
    pthread_mutex_unlock(&s->lock);
    return cpu_start;
}

/* The counts, after the receiver has been joined: join the senders and copy what the
 * threads counted. */
static void collect(fanin_state *s, sender_thread *senders, long long started, size_t capacity, fanin_outcome *out)
{
    for (long long i = 0; i < started; i++) {
        pthread_join(senders[i].thread, NULL);
    }
    out->peak_rss_bytes = peak_rss_bytes();
    memcpy(out->sent, s->sent, sizeof out->sent);
    memcpy(out->received, s->received, sizeof out->received);
    out->receiver_alive = s->receiver_alive;
    out->last_receive_ns = s->last_receive_ns;
    out->queue_capacity = capacity;
    out->queue_stats = mpsc_queue_get_stats(&s->queue);
}

/* Check: the ring's capacity for these params, or 0 after a resource error naming what
 * memory_limit_mb would have to be. */
static size_t check_capacity(const fanin_params *p, error_kind *kind, char *message, size_t message_size)
{
    size_t capacity = fanin_queue_capacity(p);
    if (capacity == 0) {
        uint64_t message_bytes = largest_words(p) * sizeof(uint64_t);
        uint64_t needed_mb = ((2 + (uint64_t)p->senders + 1) * message_bytes + (1u << 20) - 1) >> 20;
        fail(kind, message, message_size, ERROR_RESOURCE,
             "memory_limit_mb = %lld is too small for this run: a queue of 2 messages of %zu words plus one in "
             "flight per sender (%lld) and one at the receiver need %llu MiB",
             p->memory_limit_mb, largest_words(p), p->senders, (unsigned long long)needed_mb);
    }
    return capacity;
}

/* Prepare: the state the threads share (payload prototypes, the queue, the start gate),
 * or NULL when memory runs out. */
static fanin_state *create_state(const fanin_params *p, fanin_payload payload, size_t capacity)
{
    fanin_state *s = aligned_alloc(MPSC_CACHE_LINE, round_up_to_cache_line(sizeof *s));
    if (s == NULL) {
        return NULL;
    }
    memset(s, 0, sizeof *s);
    if (!prepare(s, p, payload, capacity)) {
        release_prototypes(s);
        free(s);
        return NULL;
    }
    atomic_init(&s->stop, false);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->gate_opened, NULL);
    pthread_cond_init(&s->coordinator_cue, NULL);
    return s;
}

/* Clean up: what create_state made, once every thread is joined. */
static void destroy_state(fanin_state *s)
{
    mpsc_queue_destroy(&s->queue);
    release_prototypes(s);
    pthread_cond_destroy(&s->coordinator_cue);
    pthread_cond_destroy(&s->gate_opened);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* The coordinator: check and prepare, start the receiver and the senders, run the
 * window, collect, clean up. */
bool fanin_run(const fanin_params *p, fanin_payload payload, fanin_outcome *out, error_kind *kind,
               char *message, size_t message_size)
{
    memset(out, 0, sizeof *out);
    size_t capacity = check_capacity(p, kind, message, message_size);
    if (capacity == 0) {
        return false;
    }
    fanin_state *s = create_state(p, payload, capacity);
    if (s == NULL) {
        return fail(kind, message, message_size, ERROR_RESOURCE,
                    "out of memory preparing the payloads and the queue");
    }
    sender_thread *senders =
        aligned_alloc(MPSC_CACHE_LINE, round_up_to_cache_line((size_t)p->senders * sizeof *senders));
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, THREAD_STACK_BYTES);

    bool ok = true;
    long long started = 0;
    pthread_t receiver;
    int error = senders == NULL ? ENOMEM : pthread_create(&receiver, &attributes, receiver_main, s);
    if (error != 0) {
        ok = fail(kind, message, message_size, ERROR_RESOURCE, "could not start the receiver thread: %s",
                  strerror(error));
    } else {
        ok = start_senders(s, p, senders, &attributes, &started, kind, message, message_size);
        int64_t cpu_start = run_window(s, p, started, ok, out);
        pthread_join(receiver, NULL);
        out->cpu_ns = process_cpu_ns() - cpu_start;
        collect(s, senders, started, capacity, out);
    }
    if (ok && s->out_of_memory) {
        ok = fail(kind, message, message_size, ERROR_RESOURCE,
                  "out of memory: a sender could not allocate a message (memory_limit_mb = %lld)",
                  p->memory_limit_mb);
    }
    pthread_attr_destroy(&attributes);
    free(senders);
    destroy_state(s);
    return ok;
}

void fanin_measured(const fanin_outcome *o, measured_fact out[FANIN_MEASURED_COUNT])
{
    /* The receiver can take its last time stamp before the coordinator wakes to take
     * t_senders_stopped: the drain is then 0, not negative. */
    int64_t drain_ns = o->last_receive_ns - o->senders_stopped_ns;
    out[0] = (measured_fact){.name = "send_ns", .value = o->senders_stopped_ns - o->start_ns};
    out[1] = (measured_fact){.name = "receive_ns", .value = o->last_receive_ns - o->start_ns};
    out[2] = (measured_fact){.name = "drain_ns", .value = drain_ns > 0 ? drain_ns : 0};
    out[3] = (measured_fact){.name = "cpu_ns", .value = o->cpu_ns};
    out[4] = (measured_fact){.name = "peak_rss_bytes", .value = o->peak_rss_bytes};
}

void fanin_verify(const fanin_outcome *o, verify_count out[FANIN_VERIFY_COUNT])
{
    out[0] = (verify_count){"sent_message", o->sent[SIGNAL_MESSAGE]};
    out[1] = (verify_count){"received_message", o->received[SIGNAL_MESSAGE]};
    out[2] = (verify_count){"sent_exit_signal", o->sent[SIGNAL_EXIT_SIGNAL]};
    out[3] = (verify_count){"received_exit_signal", o->received[SIGNAL_EXIT_SIGNAL]};
    out[4] = (verify_count){"receiver_alive", o->receiver_alive};
}
