/* A bounded multi-producer single-consumer queue with blocking send and receive.
 *
 * The ring is Dmitry Vyukov's bounded MPMC queue (one sequence number per cell; a
 * producer claims a cell with one CAS on the enqueue position and publishes it by
 * storing the cell's sequence), used with a single consumer, which therefore needs no
 * CAS at all.
 *
 * Payloads travel one of two ways:
 * - by copy (mpsc_queue_send_copy): every cell has a slot of slot_words words; the
 *   sender copies its payload into the slot of the cell it claimed, as POSIX mq_send or
 *   an RTOS queue copies a message into the queue's storage. The receiver owns that slot
 *   from mpsc_queue_receive until its next receive call.
 * - by pointer (mpsc_queue_send): the message carries a pointer to a block the sender
 *   allocated; ownership passes to the receiver, which frees it.
 *
 * Waiting stays fair when there are far more threads than cores:
 * - a sender that finds the ring full spins for a bounded time, watching for a quarter
 *   of the ring to free up (not the one cell the receiver is about to free, which would
 *   make both threads fight over one cache line per message), then parks on a futex.
 *   The receiver releases parked senders in batches, every half ring of receives and
 *   whenever it runs dry, waking at most senders_to_wake of them (futex wakes in FIFO
 *   order, so every sender gets its turn). Parked senders cost no CPU, which leaves the
 *   cores to the receiver; a sender that only yielded would stay runnable and take its
 *   share of the CPU from the receiver.
 * - the receiver that finds the ring empty spins briefly, then sleeps on a futex; a
 *   sender that publishes a message while the receiver sleeps wakes it (one syscall, and
 *   only by the sender that clears the sleeping flag).
 */
#ifndef MSGBENCH_MPSC_QUEUE_H
#define MSGBENCH_MPSC_QUEUE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MPSC_CACHE_LINE 64

typedef struct {
    uint32_t tag;      /* what the message is; meaning is up to the user */
    size_t words;      /* payload length in 64-bit words */
    uint64_t *payload; /* see the header comment for who owns it */
} mpsc_message;

typedef struct {
    /* Vyukov's cell sequence: == position: free for the sender of that position;
     * == position + 1: holds that position's message; the receiver then sets it to
     * position + capacity, freeing it for the next lap. */
    _Atomic size_t sequence;
    mpsc_message message;
} mpsc_cell;

typedef struct {
    size_t capacity;          /* messages the ring holds: a power of two >= 2 */
    size_t slot_words;        /* payload words each cell can hold for send_copy (0: none) */
    int senders_to_wake;      /* parked senders one wake releases: >= 1 */
    unsigned send_spin_limit; /* spins a sender waits on a full ring before parking */
} mpsc_queue_config;

/* Counters of the slow paths, for diagnostics (read after the queue went quiet). */
typedef struct {
    uint64_t sender_parks;    /* times a sender slept on a full queue */
    uint64_t receiver_sleeps; /* times the receiver slept on an empty queue */
    uint64_t sender_wakes;    /* wake calls the receiver made for parked senders */
} mpsc_queue_stats;

/* Laid out so that what senders write, what the receiver writes and the read-mostly
 * flags live on different cache lines. Treat the fields as private. */
typedef struct {
    mpsc_cell *cells;
    uint64_t *slots; /* capacity * slot_words words, or NULL */
    size_t slot_words;
    size_t mask;
    size_t wake_check_interval;
    size_t resume_room;
    int senders_to_wake;
    unsigned send_spin_limit;

    alignas(MPSC_CACHE_LINE) _Atomic size_t enqueue_position;

    /* read by every sender after every send, written only around receiver sleeps */
    alignas(MPSC_CACHE_LINE) _Atomic uint32_t receiver_sleeping;

    alignas(MPSC_CACHE_LINE) _Atomic uint32_t parked_senders;
    _Atomic uint32_t space_epoch; /* futex word parked senders wait on */
    _Atomic uint64_t sender_parks;

    /* the receiver's own */
    alignas(MPSC_CACHE_LINE) size_t dequeue_position;
    bool holding_cell; /* the cell at dequeue_position - 1 is still the receiver's */
    size_t released_since_wake_check;
    uint64_t receiver_sleeps;
    uint64_t sender_wakes;
} mpsc_queue;

/* Returns 0, or an errno value (EINVAL, ENOMEM). The slots are touched here, so that
 * page faults happen before, not during, a measurement. */
int mpsc_queue_init(mpsc_queue *q, const mpsc_queue_config *config);

/* Frees the ring. Messages still in it are dropped (pointer payloads are not freed). */
void mpsc_queue_destroy(mpsc_queue *q);

size_t mpsc_queue_capacity(const mpsc_queue *q);

/* Any thread. Enqueues *m as it is (the payload pointer travels); false if full. */
bool mpsc_queue_try_send(mpsc_queue *q, const mpsc_message *m);

/* Any thread. As try_send, waiting (spin, then park) while the ring is full. */
void mpsc_queue_send(mpsc_queue *q, const mpsc_message *m);

/* Any thread. Copies words payload[0, words) into the slot of the claimed cell
 * (words <= slot_words) and enqueues it with tag; false if full. */
bool mpsc_queue_try_send_copy(mpsc_queue *q, uint32_t tag, const uint64_t *payload, size_t words);

/* Any thread. As try_send_copy, waiting (spin, then park) while the ring is full. */
void mpsc_queue_send_copy(mpsc_queue *q, uint32_t tag, const uint64_t *payload, size_t words);

/* The one receiver thread only. Dequeues into *out; false if nothing is ready. Either
 * way, the cell of the previous receive goes back to the senders. */
bool mpsc_queue_try_receive(mpsc_queue *q, mpsc_message *out);

/* The one receiver thread only. Dequeues into *out, waiting (spin, then sleep). */
void mpsc_queue_receive(mpsc_queue *q, mpsc_message *out);

mpsc_queue_stats mpsc_queue_get_stats(mpsc_queue *q);

#endif
