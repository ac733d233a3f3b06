/* msgbench-limits: the machine's own limits, the ceilings' yardsticks (docs/limits.md).
 *
 *   bin/msgbench-limits [seconds]     (default 0.5 s per measurement)
 *
 * prints one JSON line:
 *   memcpy_bytes_per_s       memcpy of a 64 MiB buffer into another (beyond the caches),
 *                            best of the repetitions in the time given; the others below are
 *                            each the best of ROUNDS rounds (the printed counts are its own)
 *   pipe_round_trips_per_s   one byte there and back between two threads over two pipes,
 *                            placed by the scheduler (as the workloads' threads are): the
 *                            kernel's blocking hand-off, a wake-up each way
 *   pipe_cross_core_round_trips_per_s   the same with each thread pinned to its own core
 *                            (when there are two): every wake-up crosses cores
 *   loopback_bytes_per_s     one TCP connection over 127.0.0.1, 1 MiB write()s and
 *                            read()s, sender and receiver threads (as iperf3 -l 1M)
 *   cores                    online CPUs
 * and exits 0; on a failure one line on stderr naming what failed, exit 1.
 *
 *   bin/msgbench-limits --probe SECONDS SLICES
 *
 * is the noise-floor probe msgbench runs before every run (msgbench/probe.py): the pipe
 * ping-pong above (threads placed by the scheduler) over SECONDS in SLICES slices, one
 * JSON line of each slice's round trips and seconds; their spread is the machine's noise.
 * Each figure comes with the count it was computed from (bytes, round trips, seconds).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define COPY_BYTES ((size_t)64 << 20)
#define LOOPBACK_CHUNK ((size_t)1 << 20)
#define ROUNDS 3 /* pipe and loopback: the best of this many rounds */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char *what)
{
    fprintf(stderr, "msgbench-limits: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void pin(int core, int pinned)
{
    if (!pinned) {
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 2) {
        return;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(core % cores, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort: a cpuset may forbid it */
}

/* ---- memcpy: the best repetition, so a neighbour's burst does not count against it */
static void measure_memcpy(double seconds, double *bytes_per_s, long long *copies)
{
    unsigned char *a = malloc(COPY_BYTES), *b = malloc(COPY_BYTES);
    if (!a || !b) {
        errno = ENOMEM;
        die("memcpy buffers of 64 MiB");
    }
    memset(a, 1, COPY_BYTES);
    memset(b, 2, COPY_BYTES); /* both touched: no page faults inside the timed copies */
    double best = 0, end = now_s() + seconds;
    long long n = 0;
    do {
        double t0 = now_s();
        memcpy(b, a, COPY_BYTES);
        double dt = now_s() - t0;
        __asm__ volatile("" : : "r"(b) : "memory"); /* the copy is used */
        if (dt > 0 && (double)COPY_BYTES / dt > best) {
            best = (double)COPY_BYTES / dt;
        }
        n++;
        a[n % COPY_BYTES] = (unsigned char)n;
    } while (now_s() < end || n < 3);
    *bytes_per_s = best;
    *copies = n;
    free(a);
    free(b);
}

/* ---- pipe ping-pong */
struct pong {
    int in, out, pinned;
};

static void *ponger(void *arg)
{
    struct pong *p = arg;
    char c;
    pin(1, p->pinned);
    while (read(p->in, &c, 1) == 1) {
        if (write(p->out, &c, 1) != 1) {
            break;
        }
    }
    return NULL;
}

static void measure_pipe(double seconds, int pinned, double *round_trips_per_s, long long *round_trips,
                         double *elapsed)
{
    int there[2], back[2];
    if (pipe(there) != 0 || pipe(back) != 0) {
        die("pipe");
    }
    struct pong p = {there[0], back[1], pinned};
    pthread_t thread;
    if (pthread_create(&thread, NULL, ponger, &p) != 0) {
        die("pipe ping-pong thread");
    }
    pin(0, pinned);
    char c = 'x';
    long long n = 0;
    double t0 = now_s(), end = t0 + seconds, t = t0;
    while (t < end) {
        for (int k = 0; k < 256; k++) {
            if (write(there[1], &c, 1) != 1 || read(back[0], &c, 1) != 1) {
                die("pipe ping-pong");
            }
        }
        n += 256;
        t = now_s();
    }
    close(there[1]); /* the ponger's read sees EOF */
    pthread_join(thread, NULL);
    if (pinned) { /* the measuring thread may run anywhere again */
        cpu_set_t all;
        CPU_ZERO(&all);
        for (long k = 0; k < sysconf(_SC_NPROCESSORS_ONLN) && k < CPU_SETSIZE; k++) {
            CPU_SET(k, &all);
        }
        pthread_setaffinity_np(pthread_self(), sizeof all, &all);
    }
    close(there[0]);
    close(back[0]);
    close(back[1]);
    *round_trips = n;
    *elapsed = t - t0;
    *round_trips_per_s = (double)n / (t - t0);
}

/* ---- loopback TCP */
struct sink {
    int listener;
    long long bytes;
};

static void *receive_all(void *arg)
{
    struct sink *s = arg;
    int fd = accept(s->listener, NULL, NULL);
    if (fd < 0) {
        die("loopback accept");
    }
    unsigned char *buf = malloc(LOOPBACK_CHUNK);
    ssize_t n;
    while (buf && (n = read(fd, buf, LOOPBACK_CHUNK)) > 0) {
        s->bytes += n;
    }
    free(buf);
    close(fd);
    return NULL;
}

static void measure_loopback(double seconds, double *bytes_per_s, long long *bytes, double *elapsed)
{
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    struct sink s = {.listener = socket(AF_INET, SOCK_STREAM, 0)};
    if (s.listener < 0 || bind(s.listener, (struct sockaddr *)&addr, len) != 0 || listen(s.listener, 1) != 0 ||
        getsockname(s.listener, (struct sockaddr *)&addr, &len) != 0) {
        die("loopback listen on 127.0.0.1");
    }
    pthread_t thread;
    if (pthread_create(&thread, NULL, receive_all, &s) != 0) {
        die("loopback receiver thread");
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, len) != 0) {
        die("loopback connect to 127.0.0.1");
    }
    unsigned char *chunk = calloc(1, LOOPBACK_CHUNK);
    if (!chunk) {
        errno = ENOMEM;
        die("loopback buffer");
    }
    double t0 = now_s(), end = t0 + seconds;
    long long sent = 0;
    while (now_s() < end) {
        ssize_t n = write(fd, chunk, LOOPBACK_CHUNK);
        if (n < 0) {
            die("loopback write");
        }
        sent += n;
    }
    close(fd);
    pthread_join(thread, NULL); /* the clock stops when the receiver has read everything */
    double t = now_s();
    close(s.listener);
    free(chunk);
    if (s.bytes != sent) {
        fprintf(stderr, "msgbench-limits: loopback: received %lld bytes of %lld sent\n", s.bytes, sent);
        exit(1);
    }
    *bytes = s.bytes;
    *elapsed = t - t0;
    *bytes_per_s = (double)s.bytes / (t - t0);
}

#define PROBE_MAX_SLICES 1000

static int probe(int argc, char **argv)
{
    double seconds = 0, elapsed[PROBE_MAX_SLICES];
    long long trips[PROBE_MAX_SLICES];
    int slices = 0;
    if (argc != 4 || sscanf(argv[2], "%lf", &seconds) != 1 || !(seconds > 0 && seconds <= 60) ||
        sscanf(argv[3], "%d", &slices) != 1 || slices < 2 || slices > PROBE_MAX_SLICES) {
        fprintf(stderr, "msgbench-limits: --probe SECONDS SLICES: give 0 < SECONDS <= 60 and 2 <= SLICES <= %d\n",
                PROBE_MAX_SLICES);
        return 2;
    }
    for (int k = 0; k < slices; k++) {
        double rate;
        measure_pipe(seconds / slices, 0, &rate, &trips[k], &elapsed[k]);
    }
    printf("{\"probe_round_trips\": [");
    for (int k = 0; k < slices; k++) {
        printf("%s%lld", k ? ", " : "", trips[k]);
    }
    printf("], \"probe_seconds\": [");
    for (int k = 0; k < slices; k++) {
        printf("%s%.6f", k ? ", " : "", elapsed[k]);
    }
    printf("]}\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--probe") == 0) {
        return probe(argc, argv);
    }
    double seconds = 0.5;
    if (argc > 2 || (argc == 2 && (sscanf(argv[1], "%lf", &seconds) != 1 || !(seconds > 0 && seconds <= 60)))) {
        fprintf(stderr, "msgbench-limits: seconds %s: give one number of seconds per measurement, 0 < s <= 60\n",
                argc > 1 ? argv[1] : "");
        return 2;
    }
    double copy, pipe_rate, pipe_s = 0, cross_rate, cross_s = 0, loop, loop_s = 0;
    long long copies, trips = 0, cross_trips = 0, bytes = 0;
    measure_memcpy(seconds, &copy, &copies);
    /* Each in ROUNDS rounds of seconds / ROUNDS, the best one kept (as memcpy's best copy): a
     * limit is what the machine can do, and on a shared machine a neighbour's burst in one
     * round should not count against it. The counts printed are the kept round's. */
    pipe_rate = cross_rate = loop = 0;
    for (int round = 0; round < ROUNDS; round++) {
        double rate, s;
        long long n;
        measure_pipe(seconds / ROUNDS, 0, &rate, &n, &s);
        if (rate > pipe_rate) {
            pipe_rate = rate, trips = n, pipe_s = s;
        }
        measure_pipe(seconds / ROUNDS, 1, &rate, &n, &s);
        if (rate > cross_rate) {
            cross_rate = rate, cross_trips = n, cross_s = s;
        }
        measure_loopback(seconds / ROUNDS, &rate, &n, &s);
        if (rate > loop) {
            loop = rate, bytes = n, loop_s = s;
        }
    }
    printf("{\"memcpy_bytes_per_s\": %.0f, \"memcpy_copies\": %lld, \"memcpy_copy_bytes\": %zu, "
           "\"pipe_round_trips_per_s\": %.0f, \"pipe_round_trips\": %lld, \"pipe_seconds\": %.6f, "
           "\"pipe_cross_core_round_trips_per_s\": %.0f, \"pipe_cross_core_round_trips\": %lld, "
           "\"pipe_cross_core_seconds\": %.6f, "
           "\"loopback_bytes_per_s\": %.0f, \"loopback_bytes\": %lld, \"loopback_seconds\": %.6f, "
           "\"loopback_write_bytes\": %zu, \"cores\": %ld}\n",
           copy, copies, COPY_BYTES, pipe_rate, trips, pipe_s, cross_rate, cross_trips, cross_s, loop, bytes, loop_s, LOOPBACK_CHUNK,
           sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}
