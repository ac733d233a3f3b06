#define _GNU_SOURCE
#include "socket_watchdog.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "measure.h"

#define NS_PER_S INT64_C(1000000000)
/* The watchdog looks every timeout / 4 seconds, within 1 to 5 s: rarely, since each
 * wake-up may preempt the ping-pong being measured. A connection is timed out at a look
 * that finds its count unchanged since the look at least the timeout earlier: between
 * the timeout and the timeout plus two looks after its last progress (60-65 s by
 * default). */
#define LOOK_MIN_S 1
#define LOOK_MAX_S 5

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

/* The threadless watchdog's signal: a real-time one nothing else here uses. */
#define LOOK_SIGNAL SIGRTMIN

static struct {
    pthread_mutex_t lock; /* guards the list, stopping, and every watch's seen and still_since_ns */
    pthread_cond_t cue;   /* on CLOCK_MONOTONIC: the next look, or stop */
    pthread_t thread;
    bool running;
    bool stopping;
    /* threadless: LOOK_SIGNAL's handler looks, on a timer armed while a watch is listed */
    bool threadless;
    timer_t timer;
    struct sigaction previous_action;
    io_watch *watched; /* doubly linked */
} dog = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Written by watchdog_start only, before the I/O threads that read them exist. */
static int timeout_s = SOCKET_IO_TIMEOUT_S;
static char timeout_text[48] = "no progress within " STRINGIFY(SOCKET_IO_TIMEOUT_S) " s";

int watchdog_timeout_s(void)
{
    return timeout_s;
}

const char *watchdog_timeout_text(void)
{
    return timeout_text;
}

/* MSGBENCH_C_SOCKET_IO_TIMEOUT_S when it is a whole number of seconds from 1 to
 * SOCKET_IO_TIMEOUT_S (it only shortens), else SOCKET_IO_TIMEOUT_S. */
static int read_timeout_s(void)
{
    const char *text = getenv("MSGBENCH_C_SOCKET_IO_TIMEOUT_S");
    if (text == NULL) {
        return SOCKET_IO_TIMEOUT_S;
    }
    char *end = NULL;
    long seconds = strtol(text, &end, 10);
    bool valid = end != text && *end == '\0' && seconds >= 1 && seconds <= SOCKET_IO_TIMEOUT_S;
    return valid ? (int)seconds : SOCKET_IO_TIMEOUT_S;
}

/* One look at every watched connection, under the lock: the watch stays linked, so its
 * fd is still open (watchdog_remove comes before close). */
static void look(int64_t now_ns, int64_t timeout_ns)
{
    for (io_watch *w = dog.watched; w != NULL; w = w->next) {
        long long progress = atomic_load_explicit(&w->progress, memory_order_relaxed);
        if (progress != w->seen) {
            w->seen = progress;
            w->still_since_ns = now_ns;
        } else if (now_ns - w->still_since_ns >= timeout_ns && !atomic_load(&w->timed_out)) {
            atomic_store(&w->timed_out, true);
            shutdown(w->fd, SHUT_RDWR); /* a blocked recv() returns 0, a blocked send() EPIPE */
        }
    }
}

static int look_interval_s(void)
{
    int look_s = timeout_s / 4;
    return look_s < LOOK_MIN_S ? LOOK_MIN_S : look_s > LOOK_MAX_S ? LOOK_MAX_S : look_s;
}

static void *watch(void *unused)
{
    (void)unused;
    int look_s = look_interval_s();
    const int64_t timeout_ns = timeout_s * NS_PER_S;
    pthread_mutex_lock(&dog.lock);
    int64_t next_ns = monotonic_ns() + look_s * NS_PER_S;
    while (!dog.stopping) {
        int64_t now_ns = monotonic_ns();
        if (now_ns >= next_ns) {
            look(now_ns, timeout_ns);
            next_ns = now_ns + look_s * NS_PER_S;
        }
        struct timespec until = {.tv_sec = next_ns / NS_PER_S, .tv_nsec = next_ns % NS_PER_S};
        pthread_cond_timedwait(&dog.cue, &dog.lock, &until);
    }
    pthread_mutex_unlock(&dog.lock);
    return NULL;
}

/* LOOK_SIGNAL's handler. It runs on the process's only thread, never inside
 * watchdog_add or watchdog_remove (they block the signal), so the list is whole; what
 * it calls is async-signal-safe (clock_gettime, shutdown, lock-free atomics). */
static void look_now(int signal_number)
{
    (void)signal_number;
    int saved = errno;
    look(monotonic_ns(), timeout_s * NS_PER_S);
    errno = saved;
}

/* Arms (the first watch is listed) or disarms (the last one left) the look timer. */
static void set_look_timer(bool armed)
{
    time_t seconds = armed ? look_interval_s() : 0;
    struct itimerspec every = {.it_interval = {.tv_sec = seconds}, .it_value = {.tv_sec = seconds}};
    timer_settime(dog.timer, 0, &every, NULL);
}

/* Threadless: blocks LOOK_SIGNAL while the list changes, so the handler never sees it
 * half done. With a thread the lock is enough, and this does nothing. */
static void block_looks(bool block, sigset_t *saved)
{
    if (!dog.threadless) {
        return;
    }
    sigset_t looks;
    sigemptyset(&looks);
    sigaddset(&looks, LOOK_SIGNAL);
    pthread_sigmask(block ? SIG_BLOCK : SIG_SETMASK, block ? &looks : saved, block ? saved : NULL);
}

static int start_threadless(void)
{
    struct sigaction action = {.sa_handler = look_now, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    if (sigaction(LOOK_SIGNAL, &action, &dog.previous_action) != 0) {
        return errno;
    }
    struct sigevent event = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = LOOK_SIGNAL};
    if (timer_create(CLOCK_MONOTONIC, &event, &dog.timer) != 0) {
        int error = errno;
        sigaction(LOOK_SIGNAL, &dog.previous_action, NULL);
        return error;
    }
    dog.threadless = true;
    dog.running = true;
    return 0;
}

int watchdog_start(bool threadless)
{
    timeout_s = read_timeout_s();
    snprintf(timeout_text, sizeof timeout_text, "no progress within %d s", timeout_s);
    if (threadless) {
        return start_threadless();
    }
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&dog.cue, &attributes);
    pthread_condattr_destroy(&attributes);
    dog.stopping = false;
    int error = pthread_create(&dog.thread, NULL, watch, NULL);
    if (error != 0) {
        pthread_cond_destroy(&dog.cue);
        return error;
    }
    dog.running = true;
    return 0;
}

void watchdog_stop(void)
{
    if (!dog.running) {
        return;
    }
    if (dog.threadless) {
        timer_delete(dog.timer); /* a signal already sent finds the handler still there */
        sigaction(LOOK_SIGNAL, &dog.previous_action, NULL);
        dog.threadless = false;
        dog.running = false;
        return;
    }
    pthread_mutex_lock(&dog.lock);
    dog.stopping = true;
    pthread_cond_signal(&dog.cue);
    pthread_mutex_unlock(&dog.lock);
    pthread_join(dog.thread, NULL);
    pthread_cond_destroy(&dog.cue);
    dog.running = false;
}

void watchdog_add(io_watch *w, int fd)
{
    atomic_store_explicit(&w->progress, 0, memory_order_relaxed);
    atomic_store(&w->timed_out, false);
    w->fd = fd;
    sigset_t saved;
    block_looks(true, &saved);
    pthread_mutex_lock(&dog.lock);
    w->seen = 0;
    w->still_since_ns = monotonic_ns();
    w->previous = NULL;
    w->next = dog.watched;
    if (dog.watched != NULL) {
        dog.watched->previous = w;
    }
    dog.watched = w;
    if (dog.threadless && w->next == NULL) {
        set_look_timer(true);
    }
    pthread_mutex_unlock(&dog.lock);
    block_looks(false, &saved);
}

void watchdog_remove(io_watch *w)
{
    sigset_t saved;
    block_looks(true, &saved);
    pthread_mutex_lock(&dog.lock);
    if (w->previous != NULL) {
        w->previous->next = w->next;
    } else {
        dog.watched = w->next;
    }
    if (w->next != NULL) {
        w->next->previous = w->previous;
    }
    w->previous = NULL;
    w->next = NULL;
    if (dog.threadless && dog.watched == NULL) {
        set_look_timer(false);
    }
    pthread_mutex_unlock(&dog.lock);
    block_looks(false, &saved);
}
