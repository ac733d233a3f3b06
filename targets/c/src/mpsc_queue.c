#define _GNU_SOURCE
#include "mpsc_queue.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Spins (a pause each, 25 ns on this machine's CPU) of the receiver on an empty ring
 * before it sleeps. Sleeping costs the next sender a futex wake and the receiver tens of
 * microseconds of wake-up latency in a VM, so a short spin pays when messages arrive
 * every fraction of a microsecond; a long one holds a core that parked senders (just
 * woken) or other processes need. Measured from 0 to 8192 spins: 64 to 256 did best. */
#define RECEIVE_SPIN_LIMIT 256

/* A waiting sender resumes when 1/RESUME_ROOM_DIVISOR of the ring is free. */
#define RESUME_ROOM_DIVISOR 4

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* futex words are plain 32-bit integers to the kernel; _Atomic uint32_t has the same
 * size and representation. */
static void futex_wait(_Atomic uint32_t *word, uint32_t expected)
{
    /* Returns at once if *word != expected (EAGAIN); spurious wakes are fine: callers
     * re-check their condition. */
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *word, int count)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, count, NULL, NULL, 0);
}

/* aligned_alloc wants a size that is a multiple of the alignment */
static void *allocate_lines(size_t bytes)
{
    return aligned_alloc(MPSC_CACHE_LINE, (bytes + MPSC_CACHE_LINE - 1) / MPSC_CACHE_LINE * MPSC_CACHE_LINE);
}

int mpsc_queue_init(mpsc_queue *q, const mpsc_queue_config *config)
{
    size_t capacity = config->capacity;
    if (capacity < 2 || (capacity & (capacity - 1)) != 0 || config->senders_to_wake < 1 ||
        (config->slot_words > 0 && capacity > SIZE_MAX / sizeof(uint64_t) / config->slot_words)) {
        return EINVAL;
    }
    memset(q, 0, sizeof *q);
    q->cells = allocate_lines(capacity * sizeof(mpsc_cell));
    if (q->cells == NULL) {
        return ENOMEM;
    }
    if (config->slot_words > 0) {
        size_t bytes = capacity * config->slot_words * sizeof(uint64_t);
        q->slots = allocate_lines(bytes);
        if (q->slots == NULL) {
            free(q->cells);
            return ENOMEM;
        }
        memset(q->slots, 0, bytes); /* fault the pages in now */
    }
    for (size_t i = 0; i < capacity; i++) {
        atomic_init(&q->cells[i].sequence, i);
    }
    q->slot_words = config->slot_words;
    q->mask = capacity - 1;
    /* Parked senders are woken when half the ring has been drained: each woken sender
     * gets a run of sends rather than one, and the ring does not run dry meanwhile. */
    q->wake_check_interval = capacity / 2;
    q->resume_room = capacity / RESUME_ROOM_DIVISOR > 0 ? capacity / RESUME_ROOM_DIVISOR : 1;
    q->senders_to_wake = config->senders_to_wake;
    q->send_spin_limit = config->send_spin_limit;
    atomic_init(&q->enqueue_position, 0);
    atomic_init(&q->receiver_sleeping, 0);
    atomic_init(&q->parked_senders, 0);
    atomic_init(&q->space_epoch, 0);
    atomic_init(&q->sender_parks, 0);
    return 0;
}

void mpsc_queue_destroy(mpsc_queue *q)
{
    free(q->cells);
    free(q->slots);
    q->cells = NULL;
    q->slots = NULL;
}

size_t mpsc_queue_capacity(const mpsc_queue *q) { return q->mask + 1; }

/* Sender side, after publishing: wake the receiver if it announced it is going to sleep.
 * The seq_cst publish store (in try_enqueue) and this seq_cst load pair with the
 * receiver's seq_cst store of the flag and seq_cst load of the cell (Dekker): at least
 * one side sees the other, so the receiver never sleeps on a published message. */
static void wake_receiver_if_sleeping(mpsc_queue *q)
{
    if (atomic_load_explicit(&q->receiver_sleeping, memory_order_seq_cst) != 0 &&
        atomic_exchange_explicit(&q->receiver_sleeping, 0, memory_order_relaxed) != 0) {
        futex_wake(&q->receiver_sleeping, 1);
    }
}

/* What a sender enqueues: a message to move as is, or (copy) one whose payload is to be
 * copied into the claimed cell's slot. */
typedef struct {
    mpsc_message message;
    bool copy;
} outgoing;

static bool try_enqueue(mpsc_queue *q, const outgoing *o)
{
    size_t position = atomic_load_explicit(&q->enqueue_position, memory_order_relaxed);
    mpsc_cell *cell;
    for (;;) {
        cell = &q->cells[position & q->mask];
        size_t sequence = atomic_load_explicit(&cell->sequence, memory_order_acquire);
        intptr_t lag = (intptr_t)sequence - (intptr_t)position;
        if (lag == 0) {
            /* the cell is free for this position: claim the position */
            if (atomic_compare_exchange_weak_explicit(&q->enqueue_position, &position, position + 1,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                break;
            }
            /* lost the race: position now holds the current value; retry */
        } else if (lag < 0) {
            return false; /* the cell still holds last lap's message: the ring is full */
        } else {
            /* another sender claimed this position already; catch up */
            position = atomic_load_explicit(&q->enqueue_position, memory_order_relaxed);
        }
    }
    cell->message = o->message;
    if (o->copy) {
        uint64_t *slot = q->slots + (position & q->mask) * q->slot_words;
        memcpy(slot, o->message.payload, o->message.words * sizeof *slot);
        cell->message.payload = slot;
    }
    atomic_store_explicit(&cell->sequence, position + 1, memory_order_seq_cst);
    wake_receiver_if_sleeping(q);
    return true;
}

/* The sender found the ring full and spun: sleep until the receiver frees room.
 * Returns true if the message got sent after all while announcing the park.
 *
 * No lost wake-up: the sender's increment of parked_senders and the receiver's read of
 * it (wake_parked_senders) are both seq_cst read-modify-writes of one variable, so one
 * comes first. If the receiver's comes first, the sender's increment reads from it and
 * synchronizes with it, so the sender's retry below sees every cell the receiver freed
 * before. Otherwise the receiver sees the sender parked and bumps space_epoch, which the
 * sender read before announcing: futex_wait then returns at once or is woken. The
 * receiver makes that check every wake_check_interval releases and before it sleeps. */
static bool park_until_space(mpsc_queue *q, const outgoing *o)
{
    uint32_t epoch = atomic_load_explicit(&q->space_epoch, memory_order_relaxed);
    atomic_fetch_add_explicit(&q->parked_senders, 1, memory_order_seq_cst);
    bool sent = try_enqueue(q, o);
    if (!sent) {
        atomic_fetch_add_explicit(&q->sender_parks, 1, memory_order_relaxed);
        futex_wait(&q->space_epoch, epoch);
    }
    atomic_fetch_sub_explicit(&q->parked_senders, 1, memory_order_relaxed);
    return sent;
}

/* The sender found the ring full. Rather than retrying the one cell the receiver is
 * about to free (both threads would then hammer the same cache line for every message),
 * watch the cell resume_room positions ahead and resume when the receiver has freed it,
 * so senders and the receiver work far apart. Returns false if the spin budget ran out. */
static bool spin_until_room(const mpsc_queue *q)
{
    size_t target = atomic_load_explicit(&q->enqueue_position, memory_order_relaxed) + q->resume_room - 1;
    const mpsc_cell *watched = &q->cells[target & q->mask];
    for (unsigned spins = 0; spins < q->send_spin_limit; spins++) {
        /* the cell's sequence only grows: >= target once it is free for target's lap */
        if ((intptr_t)(atomic_load_explicit(&watched->sequence, memory_order_acquire) - target) >= 0) {
            return true;
        }
        cpu_relax();
    }
    return false;
}

static void enqueue(mpsc_queue *q, const outgoing *o)
{
    while (!try_enqueue(q, o)) {
        if (!spin_until_room(q) && park_until_space(q, o)) {
            return;
        }
    }
}

bool mpsc_queue_try_send(mpsc_queue *q, const mpsc_message *m)
{
    return try_enqueue(q, &(outgoing){.message = *m, .copy = false});
}

void mpsc_queue_send(mpsc_queue *q, const mpsc_message *m) { enqueue(q, &(outgoing){.message = *m, .copy = false}); }

/* The payload pointer is only read from; the slot copy is what travels. */
static outgoing copy_of(uint32_t tag, const uint64_t *payload, size_t words)
{
    return (outgoing){.message = {.tag = tag, .words = words, .payload = (uint64_t *)payload}, .copy = true};
}

bool mpsc_queue_try_send_copy(mpsc_queue *q, uint32_t tag, const uint64_t *payload, size_t words)
{
    outgoing o = copy_of(tag, payload, words);
    return try_enqueue(q, &o);
}

void mpsc_queue_send_copy(mpsc_queue *q, uint32_t tag, const uint64_t *payload, size_t words)
{
    outgoing o = copy_of(tag, payload, words);
    enqueue(q, &o);
}

/* Receiver side: release up to senders_to_wake parked senders if there are any.
 * parked_senders is read with a read-modify-write (adding 0), not a load: see
 * park_until_space for why. Being seq_cst it also orders the sender's earlier read of
 * space_epoch before the bump below. */
static void wake_parked_senders(mpsc_queue *q)
{
    q->released_since_wake_check = 0;
    if (atomic_fetch_add_explicit(&q->parked_senders, 0, memory_order_seq_cst) == 0) {
        return;
    }
    atomic_fetch_add_explicit(&q->space_epoch, 1, memory_order_relaxed);
    futex_wake(&q->space_epoch, q->senders_to_wake);
    q->sender_wakes++;
}

/* Gives the cell of the previous receive (and its slot) back to the senders. */
static void release_held_cell(mpsc_queue *q)
{
    if (!q->holding_cell) {
        return;
    }
    size_t position = q->dequeue_position - 1;
    atomic_store_explicit(&q->cells[position & q->mask].sequence, position + q->mask + 1, memory_order_release);
    q->holding_cell = false;
    if (++q->released_since_wake_check >= q->wake_check_interval) {
        wake_parked_senders(q);
    }
}

static bool next_cell_ready(const mpsc_queue *q, memory_order order)
{
    const mpsc_cell *cell = &q->cells[q->dequeue_position & q->mask];
    return atomic_load_explicit(&cell->sequence, order) == q->dequeue_position + 1;
}

bool mpsc_queue_try_receive(mpsc_queue *q, mpsc_message *out)
{
    release_held_cell(q);
    if (!next_cell_ready(q, memory_order_acquire)) {
        /* empty, or the sender of this position has claimed it but not yet published */
        return false;
    }
    *out = q->cells[q->dequeue_position & q->mask].message;
    q->dequeue_position++;
    q->holding_cell = true;
    return true;
}

void mpsc_queue_receive(mpsc_queue *q, mpsc_message *out)
{
    for (;;) {
        if (mpsc_queue_try_receive(q, out)) {
            return;
        }
        /* Nothing to receive: never wait while senders sleep on room we have made. */
        wake_parked_senders(q);
        for (unsigned spins = 0; spins < RECEIVE_SPIN_LIMIT; spins++) {
            cpu_relax();
            if (mpsc_queue_try_receive(q, out)) {
                return;
            }
        }
        atomic_store_explicit(&q->receiver_sleeping, 1, memory_order_seq_cst);
        if (!next_cell_ready(q, memory_order_seq_cst)) {
            q->receiver_sleeps++;
            futex_wait(&q->receiver_sleeping, 1);
        }
        atomic_store_explicit(&q->receiver_sleeping, 0, memory_order_relaxed);
    }
}

mpsc_queue_stats mpsc_queue_get_stats(mpsc_queue *q)
{
    return (mpsc_queue_stats){
        .sender_parks = atomic_load_explicit(&q->sender_parks, memory_order_relaxed),
        .receiver_sleeps = q->receiver_sleeps,
        .sender_wakes = q->sender_wakes,
    };
}
