/* The socket workload's time limit on blocking I/O: a progress watchdog. Each
 * connection's I/O thread counts the bytes it moves; one watchdog per process (a thread,
 * or a timer signal: watchdog_start) looks at the counts every few seconds, and shuts
 * down (SHUT_RDWR) a connection whose count has not moved for the timeout, which wakes
 * its blocked recv()/send(); the I/O helpers then report IO_TIMEOUT. Not
 * SO_RCVTIMEO/SO_SNDTIMEO: with a finite one every blocking call arms and cancels a
 * kernel timer (schedule_timeout), ~0.3 us of a 14 us echo round trip at 16 B pinned
 * (docs/measurements/issue-13-socket.md); sockperf blocks without one. */
#ifndef MSGBENCH_SOCKET_WATCHDOG_H
#define MSGBENCH_SOCKET_WATCHDOG_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* A workload socket on which nothing moved for this long is timed out. Tests shorten it
 * with the environment variable MSGBENCH_C_SOCKET_IO_TIMEOUT_S (whole seconds), read by
 * watchdog_start. */
#define SOCKET_IO_TIMEOUT_S 60

/* One connection, embedded in its thread's state. Its thread writes progress; the
 * watchdog writes timed_out; the rest is the watchdog's, under its lock (and, threadless,
 * changed only with its signal blocked). */
typedef struct io_watch {
    atomic_llong progress;  /* bytes moved so far */
    atomic_bool timed_out;  /* set just before the watchdog shuts the socket down */
    int fd;
    long long seen;         /* progress at the watchdog's last look */
    int64_t still_since_ns; /* when that look saw it move */
    struct io_watch *previous, *next;
} io_watch;

/* Counts n bytes moved. Only the connection's own thread calls it: a relaxed load and
 * store, plain moves on x86 (no locked instruction on the hot path). */
static inline void io_watch_moved(io_watch *w, long long n)
{
    atomic_store_explicit(&w->progress, atomic_load_explicit(&w->progress, memory_order_relaxed) + n,
                          memory_order_relaxed);
}

/* Whether the watchdog timed this connection out (its recv()/send() then saw EOF or
 * EPIPE because of our shutdown, not the peer's). */
static inline bool io_watch_timed_out(const io_watch *w)
{
    return atomic_load(&w->timed_out);
}

/* The timeout in force: SOCKET_IO_TIMEOUT_S unless the environment shortened it. */
int watchdog_timeout_s(void);

/* "no progress within 60 s": for messages. */
const char *watchdog_timeout_text(void);

/* Starts this process's watchdog (one at a time) and reads the timeout. 0 or an errno
 * value. Before the I/O starts. A thread of its own, or threadless: a timer signal
 * (SIGRTMIN, SA_RESTART) whose handler looks, armed only while a connection is watched,
 * for a process whose only thread does the I/O. Why threadless: on this kernel a second
 * live thread, even asleep, costs every context switch of the process: ~0.2 us of a 14
 * us echo round trip pinned (docs/measurements/issue-13-socket.md), so a one-pair echo
 * runs in single-threaded processes, as sockperf's do. */
int watchdog_start(bool threadless);

/* Stops the watchdog (joins its thread, or deletes its timer). After the I/O ended. */
void watchdog_stop(void);

/* Watches fd from now on: the connection's thread, right before its I/O loop (so a
 * watched connection's thread is in, or about to be in, blocking I/O). Without a
 * running watchdog nothing times it out. */
void watchdog_add(io_watch *w, int fd);

/* Stops watching: before the fd is closed, so the watchdog never shuts down a closed
 * (or reused) descriptor number. */
void watchdog_remove(io_watch *w);

#endif
