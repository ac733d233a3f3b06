#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "suites.h"
#include "mpsc_queue.h"

static void test_single_thread(void)
{
    mpsc_queue q;
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){3, 0, 1, 16}) == EINVAL);
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){1, 0, 1, 16}) == EINVAL);
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){4, 0, 0, 16}) == EINVAL);
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){4, 0, 1, 16}) == 0);
    CHECK(mpsc_queue_capacity(&q) == 4);

    mpsc_message out;
    CHECK(!mpsc_queue_try_receive(&q, &out));
    for (uint32_t i = 0; i < 4; i++) {
        mpsc_message m = {.tag = i, .words = i, .payload = NULL};
        CHECK(mpsc_queue_try_send(&q, &m));
    }
    mpsc_message extra = {.tag = 99};
    CHECK(!mpsc_queue_try_send(&q, &extra)); /* bounded: full at capacity */

    CHECK(mpsc_queue_try_receive(&q, &out) && out.tag == 0 && out.words == 0);
    CHECK(!mpsc_queue_try_send(&q, &extra)); /* the receiver still holds that cell */
    CHECK(mpsc_queue_try_receive(&q, &out) && out.tag == 1); /* ... until its next receive */
    CHECK(mpsc_queue_try_send(&q, &extra));
    for (uint32_t expected = 2; expected < 4; expected++) {
        CHECK(mpsc_queue_try_receive(&q, &out) && out.tag == expected);
    }
    CHECK(mpsc_queue_try_receive(&q, &out) && out.tag == 99);
    CHECK(!mpsc_queue_try_receive(&q, &out));

    /* many laps around the ring keep FIFO order */
    int in_order = 1;
    for (uint32_t i = 0; i < 1000; i++) {
        mpsc_message m = {.tag = i};
        mpsc_queue_send(&q, &m);
        mpsc_queue_receive(&q, &out);
        in_order = in_order && out.tag == i;
    }
    CHECK(in_order);
    mpsc_queue_destroy(&q);
}

enum { PRODUCERS = 8 };

typedef struct {
    mpsc_queue *queue;
    uint32_t id;
    uint64_t messages;
} producer_args;

static void *produce(void *arg)
{
    producer_args *a = arg;
    for (uint64_t n = 0; n < a->messages; n++) {
        uint64_t *payload = malloc(sizeof *payload);
        if (payload == NULL) {
            abort(); /* a test machine out of memory: nothing sensible to check */
        }
        *payload = n;
        mpsc_message m = {.tag = a->id, .words = 1, .payload = payload};
        mpsc_queue_send(a->queue, &m);
    }
    return NULL;
}

/* Many producers through a small ring (so senders park and get woken): every message
 * arrives exactly once, and each producer's messages arrive in the order it sent them. */
static void test_concurrent_producers(size_t capacity, unsigned spin_limit, uint64_t messages)
{
    mpsc_queue q;
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){capacity, 0, 2, spin_limit}) == 0);
    pthread_t threads[PRODUCERS];
    producer_args args[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_args){&q, i, messages};
        CHECK(pthread_create(&threads[i], NULL, produce, &args[i]) == 0);
    }
    uint64_t received[PRODUCERS] = {0};
    int in_order = 1;
    int tags_valid = 1;
    for (uint64_t i = 0; i < PRODUCERS * messages; i++) {
        mpsc_message m;
        mpsc_queue_receive(&q, &m);
        if (m.tag >= PRODUCERS || m.payload == NULL) {
            tags_valid = 0;
            continue;
        }
        in_order = in_order && *m.payload == received[m.tag];
        received[m.tag]++;
        free(m.payload);
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(threads[i], NULL);
    }
    CHECK(tags_valid);
    CHECK(in_order);
    for (int i = 0; i < PRODUCERS; i++) {
        CHECK(received[i] == messages);
    }
    mpsc_message m;
    CHECK(!mpsc_queue_try_receive(&q, &m)); /* nothing extra */
    mpsc_queue_destroy(&q);
}

/* Copy mode: the payload lands in the ring's slot; the receiver's view of it stays
 * intact until its next receive, even while senders keep sending. */
static void test_copy_single_thread(void)
{
    mpsc_queue q;
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){4, 3, 1, 16}) == 0);
    uint64_t first[3] = {1, 2, 3};
    uint64_t second[2] = {4, 5};
    CHECK(mpsc_queue_try_send_copy(&q, 10, first, 3));
    CHECK(mpsc_queue_try_send_copy(&q, 11, second, 2));
    first[0] = 99; /* the sender's buffer is its own again */

    mpsc_message m;
    CHECK(mpsc_queue_try_receive(&q, &m) && m.tag == 10 && m.words == 3);
    CHECK(m.payload != first && m.payload[0] == 1 && m.payload[1] == 2 && m.payload[2] == 3);
    /* the held cell is not free yet: 3 more fit (2 free + none), the 4th does not */
    uint64_t filler = 7;
    CHECK(mpsc_queue_try_send_copy(&q, 12, &filler, 1));
    CHECK(mpsc_queue_try_send_copy(&q, 13, &filler, 1));
    CHECK(!mpsc_queue_try_send_copy(&q, 14, &filler, 1));
    CHECK(m.payload[0] == 1 && m.payload[2] == 3); /* still ours */

    CHECK(mpsc_queue_try_receive(&q, &m) && m.tag == 11 && m.words == 2 && m.payload[1] == 5);
    CHECK(mpsc_queue_try_send_copy(&q, 14, &filler, 1)); /* the first cell came back */
    mpsc_queue_destroy(&q);
}

enum { COPY_WORDS = 3 };

static void *produce_copies(void *arg)
{
    producer_args *a = arg;
    for (uint64_t n = 0; n < a->messages; n++) {
        uint64_t payload[COPY_WORDS] = {a->id, n, ~n};
        mpsc_queue_send_copy(a->queue, a->id, payload, COPY_WORDS);
    }
    return NULL;
}

static void test_concurrent_copies(size_t capacity, unsigned spin_limit, uint64_t messages)
{
    mpsc_queue q;
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){capacity, COPY_WORDS, 2, spin_limit}) == 0);
    pthread_t threads[PRODUCERS];
    producer_args args[PRODUCERS];
    for (uint32_t i = 0; i < PRODUCERS; i++) {
        args[i] = (producer_args){&q, i, messages};
        CHECK(pthread_create(&threads[i], NULL, produce_copies, &args[i]) == 0);
    }
    uint64_t received[PRODUCERS] = {0};
    int intact = 1;
    for (uint64_t i = 0; i < PRODUCERS * messages; i++) {
        mpsc_message m;
        mpsc_queue_receive(&q, &m);
        if (m.tag >= PRODUCERS || m.words != COPY_WORDS) {
            intact = 0;
            continue;
        }
        uint64_t n = received[m.tag]++;
        intact = intact && m.payload[0] == m.tag && m.payload[1] == n && m.payload[2] == ~n;
    }
    for (int i = 0; i < PRODUCERS; i++) {
        pthread_join(threads[i], NULL);
    }
    CHECK(intact);
    for (int i = 0; i < PRODUCERS; i++) {
        CHECK(received[i] == messages);
    }
    mpsc_queue_destroy(&q);
}

static void *send_late(void *arg)
{
    struct timespec pause = {0, 30 * 1000 * 1000};
    nanosleep(&pause, NULL);
    mpsc_message m = {.tag = 7};
    mpsc_queue_send(arg, &m);
    return NULL;
}

/* The receiver sleeps on an empty queue and a later send wakes it. */
static void test_receiver_sleeps_and_wakes(void)
{
    mpsc_queue q;
    CHECK(mpsc_queue_init(&q, &(mpsc_queue_config){2, 0, 1, 16}) == 0);
    pthread_t sender;
    CHECK(pthread_create(&sender, NULL, send_late, &q) == 0);
    mpsc_message m = {0};
    mpsc_queue_receive(&q, &m);
    pthread_join(sender, NULL);
    CHECK(m.tag == 7);
    CHECK(mpsc_queue_get_stats(&q).receiver_sleeps >= 1);
    mpsc_queue_destroy(&q);
}

void test_queue(void)
{
    test_single_thread();
    /* tiny rings make senders park and wake all the time (syscalls: fewer messages) */
    test_concurrent_producers(2, 0, 10000); /* park at once */
    test_concurrent_producers(8, 16, 20000);
    test_concurrent_producers(1024, 4096, 200000);
    test_copy_single_thread();
    test_concurrent_copies(4, 0, 10000);
    test_concurrent_copies(1024, 256, 200000);
    test_receiver_sleeps_and_wakes();
}
