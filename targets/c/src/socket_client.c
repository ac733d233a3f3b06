#define _GNU_SOURCE
#include "socket_client.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "json.h"
#include "measure.h"
#include "socket_net.h"
#include "socket_payload.h"
#include "socket_peer.h"
#include "socket_pin.h"
#include "socket_server.h"
#include "socket_watchdog.h"

#define NS_PER_S INT64_C(1000000000)
/* After a client thread failed: how long the server gets to say why. */
#define SERVER_EXPLAIN_LIMIT_S 5
/* Open loop: a writer stopped by its reader's failure notices within this much, however
 * slow the rate. */
#define WRITER_MAX_SLEEP_NS (50 * INT64_C(1000000))

typedef struct {
    const socket_params *p;
    long long messages;
    const unsigned char *frames; /* buffers prepared frames, frame_stride bytes apart */
    size_t frame_bytes;
    size_t frame_stride;
    size_t buffers;
    pthread_mutex_t lock;
    pthread_cond_t cue;
    long long ready;
    bool gate_open;
    bool abort;
    /* open loop: message i of every socket is due at start_ns + i * interval_ns */
    int64_t start_ns; /* when the gate opened */
    double interval_ns;
} shared_state;

typedef struct {
    pthread_t thread;
    int fd;
    io_watch watch; /* fd's progress, for the watchdog */
    long long index;
    shared_state *s;
    unsigned char *receive; /* echo: where the echo lands (in run_state's block) */
    int64_t start_ns;
    int64_t end_ns;
    /* this thread's own counts */
    long long sent;
    long long sent_bytes;
    long long received;
    long long received_bytes;
    long long mismatches;
    bool failed;
    char error[320];
    /* open loop (rate > 0): the writer thread, which counts sent and sent_bytes; stop is
     * set by whichever of writer and reader fails first (writer_first: the writer) */
    pthread_t writer;
    bool writer_started;
    atomic_bool stop;
    bool writer_failed;
    bool writer_first;
    char writer_error[320];
    histogram latency; /* the reader's */
} client;

static void failf(client *c, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void failf(client *c, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(c->error, sizeof c->error, format, args);
    va_end(args);
    c->failed = true;
}

/* An I/O failure on socket k after `done` complete messages, in the words the brief of
 * the workload asks for when the server went away. */
static void fail_io(client *c, const char *doing, long long done, io_status status, int error)
{
    if (status == IO_EOF) {
        failf(c, "the server closed socket %lld after %lld of %lld messages (%s while %s)", c->index, done,
              c->s->messages, net_status_text(status, error), doing);
    } else {
        failf(c, "socket %lld: %s after %lld of %lld messages (%s)", c->index, net_status_text(status, error), done,
              c->s->messages, doing);
    }
}

size_t socket_send_buffers(long long size)
{
    size_t frame_bytes = FRAME_HEADER_BYTES + (size_t)size;
    size_t buffers = SOCKET_SEND_BUFFER_BUDGET / frame_bytes;
    if (buffers > SOCKET_MAX_SEND_BUFFERS) {
        buffers = SOCKET_MAX_SEND_BUFFERS;
    }
    return buffers < 2 ? 2 : buffers;
}

/* An echo read whole (in c->receive), counted and checked against the frame it answers:
 * its length, its first and last payload byte, and with check_content every byte (each
 * against the one value the frame sent carries in all its payload bytes:
 * socket_payload.h). False when its length is not the frame's: the stream is out of step. */
static bool count_echo(client *c, const unsigned char *frame, long long i)
{
    const shared_state *s = c->s;
    const long long size = s->p->size;
    const unsigned char *echo = c->receive;
    uint32_t length = frame_get_length(echo);
    if (length != (uint32_t)size) {
        failf(c, "socket %lld: echo %lld has length %u, expected %lld: the stream is out of step", c->index, i + 1,
              length, size);
        return false;
    }
    c->received++;
    c->received_bytes += size;
    const unsigned char value = frame[FRAME_HEADER_BYTES];
    bool same = echo[FRAME_HEADER_BYTES] == value && echo[s->frame_bytes - 1] == value;
    if (same && s->p->check_content) {
        same = payload_is_all(echo + FRAME_HEADER_BYTES, (size_t)size, value);
    }
    c->mismatches += same ? 0 : 1;
    return true;
}

/* Echo: write a frame (one send() of the prepared header + payload), read the whole
 * echo back with blocking recv()s, check it (count_echo). */
static void run_echo(client *c)
{
    const shared_state *s = c->s;
    const long long size = s->p->size;
    unsigned char *echo = c->receive;
    const size_t frame_bytes = s->frame_bytes;
    c->start_ns = monotonic_ns();
    for (long long i = 0; i < s->messages; i++) {
        const unsigned char *frame = s->frames + (size_t)(i % (long long)s->buffers) * s->frame_stride;
        int error = 0;
        io_status status = net_write_all(c->fd, &c->watch, frame, frame_bytes, NULL, &error);
        if (status != IO_OK) {
            fail_io(c, "sending", c->received, status, error);
            break;
        }
        c->sent++;
        c->sent_bytes += size;
        status = net_read_exact(c->fd, &c->watch, echo, frame_bytes, NULL, &error);
        if (status != IO_OK) {
            fail_io(c, "reading an echo", c->received, status, error);
            break;
        }
        if (!count_echo(c, frame, i)) {
            break;
        }
    }
    c->end_ns = monotonic_ns();
}

/* Flow: one send() per frame, as fast as they go, then shutdown(SHUT_WR); the server
 * answers the EOF with one byte once it has read everything, and the clock stops when
 * that byte is here: the time until the receiver had the last byte (plus one one-way
 * trip of one byte), measured on one clock. */
static void run_flow(client *c)
{
    const shared_state *s = c->s;
    const long long size = s->p->size;
    const size_t frame_bytes = s->frame_bytes;
    c->start_ns = monotonic_ns();
    bool all_sent = true;
    for (long long i = 0; i < s->messages; i++) {
        const unsigned char *frame = s->frames + (size_t)(i % (long long)s->buffers) * s->frame_stride;
        int error = 0;
        io_status status = net_write_all(c->fd, &c->watch, frame, frame_bytes, NULL, &error);
        if (status != IO_OK) {
            fail_io(c, "sending", c->sent, status, error);
            all_sent = false;
            break;
        }
        c->sent++;
        c->sent_bytes += size;
    }
    if (all_sent) {
        unsigned char ack = 0;
        int error = 0;
        io_status status = IO_OK;
        if (shutdown(c->fd, SHUT_WR) != 0) {
            status = IO_ERROR;
            error = errno;
        } else {
            status = net_read_exact(c->fd, &c->watch, &ack, 1, NULL, &error);
        }
        if (status != IO_OK) {
            fail_io(c, "waiting for the server's ack", c->sent, status, error);
        }
    }
    c->end_ns = monotonic_ns();
}

/* Open loop: message i's intended send time. */
static int64_t intended_ns(const shared_state *s, long long i)
{
    return s->start_ns + (int64_t)llround((double)i * s->interval_ns);
}

/* Open loop: the first of writer and reader to fail stops the other. shutdown() wakes
 * the other's blocked send() or recv(); the fd stays open until the client closes it. */
static bool stop_the_other(client *c)
{
    bool first = !atomic_exchange(&c->stop, true);
    if (first) {
        shutdown(c->fd, SHUT_RDWR);
    }
    return first;
}

/* Waits until due_ns, in sleeps of at most WRITER_MAX_SLEEP_NS so that a stop is seen;
 * false when stopped. */
static bool writer_wait(client *c, int64_t due_ns)
{
    for (;;) {
        if (atomic_load_explicit(&c->stop, memory_order_relaxed)) {
            return false;
        }
        int64_t now = monotonic_ns();
        if (now >= due_ns) {
            return true;
        }
        sleep_until_ns(due_ns - now > WRITER_MAX_SLEEP_NS ? now + WRITER_MAX_SLEEP_NS : due_ns);
    }
}

/* Open loop's writer: sends message i at its intended time (at once when late, never
 * skipping one, one send() per frame as the closed loop), whatever the echoes do. It
 * sleeps with clock_nanosleep(TIMER_ABSTIME) at a timer slack of 1 ns (the default
 * 50 us would add up to 50 us to every wake-up) and never spins: on two cores a spinning
 * writer would take the CPU its reader and the server need, and a late wake-up is
 * charged anyway (latencies run from the intended time). Its watch is its own and never
 * watched: the reader's watch times the connection out. */
static void run_writer(client *c)
{
    const shared_state *s = c->s;
    io_watch unwatched = {0};
    for (long long i = 0; i < s->messages; i++) {
        if (!writer_wait(c, intended_ns(s, i))) {
            return;
        }
        const unsigned char *frame = s->frames + (size_t)(i % (long long)s->buffers) * s->frame_stride;
        int error = 0;
        io_status status = net_write_all(c->fd, &unwatched, frame, s->frame_bytes, NULL, &error);
        if (status != IO_OK) {
            if (status == IO_EOF) {
                snprintf(c->writer_error, sizeof c->writer_error,
                         "the server closed socket %lld after %lld of %lld messages sent (%s while sending)", c->index,
                         i, s->messages, net_status_text(status, error));
            } else {
                snprintf(c->writer_error, sizeof c->writer_error,
                         "socket %lld: %s after %lld of %lld messages sent (sending)", c->index,
                         net_status_text(status, error), i, s->messages);
            }
            c->writer_failed = true;
            c->writer_first = stop_the_other(c);
            return;
        }
        c->sent++;
        c->sent_bytes += s->p->size;
    }
}

static void *writer_main(void *arg)
{
    client *c = arg;
    shared_state *s = c->s;
    prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL); /* failing, the default slack: later wake-ups, charged */
    if (s->p->pin_pairs) {
        socket_pin_pair(c->index); /* its pair's CPU, as the client thread (a failure: that thread says) */
    }
    pthread_mutex_lock(&s->lock);
    while (!s->gate_open) {
        pthread_cond_wait(&s->cue, &s->lock);
    }
    bool abort_run = s->abort;
    pthread_mutex_unlock(&s->lock);
    if (!abort_run) {
        run_writer(c);
    }
    return NULL;
}

/* Open loop's reader (the client thread): reads echo i in order, checks it as run_echo
 * does, and records its latency: the arrival of its last byte minus its intended send
 * time, so a client or server that falls behind is charged for the wait it caused. */
static void run_open_echo(client *c)
{
    const shared_state *s = c->s;
    unsigned char *echo = c->receive;
    const size_t frame_bytes = s->frame_bytes;
    c->start_ns = s->start_ns;
    c->end_ns = c->start_ns;
    for (long long i = 0; i < s->messages; i++) {
        const unsigned char *frame = s->frames + (size_t)(i % (long long)s->buffers) * s->frame_stride;
        int error = 0;
        io_status status = net_read_exact(c->fd, &c->watch, echo, frame_bytes, NULL, &error);
        if (status != IO_OK) {
            fail_io(c, "reading an echo", c->received, status, error);
            break;
        }
        c->end_ns = monotonic_ns();
        if (!histogram_record(&c->latency, c->end_ns - intended_ns(s, i))) {
            failf(c, "socket %lld: out of memory for the latency histogram", c->index);
            break;
        }
        if (!count_echo(c, frame, i)) {
            break;
        }
    }
    if (c->failed) {
        stop_the_other(c);
    }
    pthread_join(c->writer, NULL);
    c->writer_started = false;
    if (c->writer_failed && c->writer_first) {
        memcpy(c->error, c->writer_error, sizeof c->error); /* the reader only saw its shutdown */
        c->failed = true;
    }
}

/* tuned: the calling thread on its pair's CPU before the gate opens, so no message
 * crosses before it */
static void pin_client(client *c)
{
    int pin_error = c->s->p->pin_pairs ? socket_pin_pair(c->index) : 0;
    if (pin_error != 0) {
        failf(c, "socket %lld: cannot pin the client thread to CPU %d: %s", c->index, socket_pair_cpu(c->index),
              strerror(pin_error));
    }
}

/* Waits for the gate, runs the sequence and closes the socket. */
static void run_client(client *c)
{
    shared_state *s = c->s;
    pthread_mutex_lock(&s->lock);
    s->ready++;
    pthread_cond_broadcast(&s->cue);
    while (!s->gate_open) {
        pthread_cond_wait(&s->cue, &s->lock);
    }
    bool abort_run = s->abort || c->failed;
    pthread_mutex_unlock(&s->lock);
    if (!abort_run) {
        watchdog_add(&c->watch, c->fd);
        if (c->writer_started) {
            run_open_echo(c);
        } else if (s->p->mode == SOCKET_ECHO) {
            run_echo(c);
        } else {
            run_flow(c);
        }
        watchdog_remove(&c->watch);
    } else if (c->writer_started) {
        pthread_join(c->writer, NULL); /* it saw the abort at the gate */
        c->writer_started = false;
    }
    /* echo: the server's handler sees EOF and ends; flow: after the ack, nothing more */
    close(c->fd);
    c->fd = -1;
}

/* Open loop: the socket's writer thread, started before the client says it is ready,
 * so that it waits at the gate with it. */
static void start_writer(client *c)
{
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, SOCKET_THREAD_STACK_BYTES);
    int error = pthread_create(&c->writer, &attributes, writer_main, c);
    pthread_attr_destroy(&attributes);
    if (error != 0) {
        failf(c, "socket %lld: cannot start its writer thread: %s", c->index, strerror(error));
    }
    c->writer_started = error == 0;
}

static void *client_main(void *arg)
{
    client *c = arg;
    pin_client(c);
    if (socket_open_loop(c->s->p) && !c->failed) {
        start_writer(c);
    }
    run_client(c);
    return NULL;
}

/* One conversation with the server, and everything a run holds. */
typedef struct {
    const socket_params *p;
    FILE *log;
    peer_command command;
    peer server;
    bool server_started;
    unsigned char *frames;
    unsigned char *receive; /* echo: the clients' receive buffers */
    client *clients;
    shared_state shared;
    bool shared_ready;
    error_kind *kind;
    char *message;
    size_t message_size;
} run_state;

static bool run_fail(run_state *r, error_kind kind, const char *format, ...) __attribute__((format(printf, 3, 4)));

static bool run_fail(run_state *r, error_kind kind, const char *format, ...)
{
    *r->kind = kind;
    va_list args;
    va_start(args, format);
    vsnprintf(r->message, r->message_size, format, args);
    va_end(args);
    return false;
}

typedef enum { SERVER_LISTENING, SERVER_SERVED, SERVER_ERROR, SERVER_OTHER } server_line_type;

/* Reads the server's lines until one of the protocol's (listening, served, error) or
 * EOF or deadline. On listening: *a = port; served: *a = messages, *b = bytes; error:
 * *kind and message are set (relayed). False on EOF/timeout, with the message saying
 * what was awaited. */
static bool await_server(run_state *r, const char *awaited, int limit_s, server_line_type *type, long long *a,
                         long long *b)
{
    int64_t deadline_ns = monotonic_ns() + limit_s * NS_PER_S;
    char line[PEER_LINE_BYTES];
    for (;;) {
        peer_line_status status = peer_read_line(&r->server, deadline_ns, line, sizeof line);
        if (status == PEER_TIMEOUT) {
            return run_fail(r, ERROR_INTERNAL, "the server printed no %s line within %d s", awaited, limit_s);
        }
        if (status == PEER_EOF) {
            peer_finish(&r->server, monotonic_ns() + 2 * NS_PER_S);
            char how[64];
            peer_describe_exit(&r->server, how, sizeof how);
            return run_fail(r, ERROR_INTERNAL, "the server (%s) closed its stdout before it printed a %s line (%s)",
                            r->command.argv[0], awaited, how);
        }
        char error[256];
        json_value *v = json_parse(line, strlen(line), error, sizeof error);
        const json_value *t = json_object_get(v, "type");
        const char *name = t != NULL && t->type == JSON_STRING ? t->as.string.chars : "";
        *type = SERVER_OTHER;
        if (strcmp(name, "listening") == 0 && json_as_integer(json_object_get(v, "port"), a) && *a >= 1 &&
            *a <= 65535) {
            *type = SERVER_LISTENING;
        } else if (strcmp(name, "served") == 0 && json_as_integer(json_object_get(v, "messages"), a) &&
                   json_as_integer(json_object_get(v, "bytes"), b)) {
            *type = SERVER_SERVED;
        } else if (strcmp(name, "error") == 0) {
            const json_value *k = json_object_get(v, "kind");
            const json_value *m = json_object_get(v, "message");
            *type = SERVER_ERROR;
            run_fail(r, protocol_error_kind(k != NULL && k->type == JSON_STRING ? k->as.string.chars : ""),
                     "the server: %s", m != NULL && m->type == JSON_STRING ? m->as.string.chars : "(no message)");
        }
        json_free(v);
        if (*type != SERVER_OTHER) {
            return true;
        }
        fprintf(r->log, "c socket: ignoring a line from the server: %.200s\n", line);
    }
}

static void release(run_state *r)
{
    if (r->clients != NULL) {
        for (long long k = 0; k < r->p->sockets; k++) {
            if (r->clients[k].fd >= 0) {
                close(r->clients[k].fd);
            }
            histogram_free(&r->clients[k].latency);
        }
        free(r->clients);
    }
    if (r->shared_ready) {
        pthread_mutex_destroy(&r->shared.lock);
        pthread_cond_destroy(&r->shared.cue);
    }
    free(r->frames);
    free(r->receive);
    if (r->server_started) {
        peer_finish(&r->server, monotonic_ns() + SOCKET_EXIT_LIMIT_S * NS_PER_S);
    }
    peer_command_free(&r->command);
}

/* The memory check, the frames and the client table: before the server starts. */
static bool prepare(run_state *r)
{
    const socket_params *p = r->p;
    size_t frame_bytes = FRAME_HEADER_BYTES + (size_t)p->size;
    size_t stride = net_buffer_stride(frame_bytes);
    size_t buffers = socket_send_buffers(p->size);
    long long client_bytes = (long long)(buffers * stride) + (p->mode == SOCKET_ECHO ? p->sockets * (long long)stride : 0);
    long long server_bytes = p->sockets * (p->mode == SOCKET_ECHO ? (long long)frame_bytes : SOCKET_FLOW_CHUNK_BYTES);
    long long need = client_bytes + (p->remote ? 0 : server_bytes);
    long long physical = net_physical_memory_bytes();
    if (physical > 0 && need > physical / 2) {
        return run_fail(r, ERROR_RESOURCE,
                        "size = %lld with sockets = %lld needs %lld MiB of buffers (client%s), more than half of "
                        "this host's %lld MiB",
                        p->size, p->sockets, need >> 20, p->remote ? "" : " and server", physical >> 20);
    }
    char message[256];
    if (!net_reserve_fds(p->sockets + 16, message, sizeof message)) {
        return run_fail(r, ERROR_RESOURCE, "%s", message);
    }
    r->frames = net_buffer_alloc(buffers * stride);
    r->clients = malloc((size_t)p->sockets * sizeof *r->clients);
    if (r->clients != NULL) {
        for (long long k = 0; k < p->sockets; k++) {
            r->clients[k] = (client){.fd = -1, .index = k};
        }
    }
    if (r->frames == NULL || r->clients == NULL) {
        return run_fail(r, ERROR_RESOURCE, "out of memory for %zu frames of %zu bytes", buffers, frame_bytes);
    }
    for (size_t j = 0; j < buffers; j++) {
        unsigned char *frame = r->frames + j * stride;
        frame_put_length(frame, (uint32_t)p->size);
        memset(frame + FRAME_HEADER_BYTES, (int)(j + 1), (size_t)p->size);
    }
    r->shared = (shared_state){.p = p, .messages = socket_messages(p), .frames = r->frames,
                               .frame_bytes = frame_bytes, .frame_stride = stride, .buffers = buffers,
                               .interval_ns = socket_open_loop(p) ? (double)p->sockets * 1e9 / p->rate : 0};
    pthread_mutex_init(&r->shared.lock, NULL);
    pthread_cond_init(&r->shared.cue, NULL);
    r->shared_ready = true;
    /* echo: one block of receive buffers, each on its own cache lines */
    if (p->mode == SOCKET_ECHO) {
        r->receive = net_buffer_alloc((size_t)p->sockets * stride);
        if (r->receive == NULL) {
            return run_fail(r, ERROR_RESOURCE, "out of memory for %lld echo buffers of %zu bytes", p->sockets,
                            frame_bytes);
        }
        memset(r->receive, 0, (size_t)p->sockets * stride); /* touched now, not in the timed loop */
    }
    for (long long k = 0; k < p->sockets; k++) {
        r->clients[k].s = &r->shared;
        r->clients[k].receive = r->receive != NULL ? r->receive + (size_t)k * stride : NULL;
    }
    return true;
}

/* Starts the server and waits for its port. */
static bool start_server(run_state *r, const char *request_line, size_t request_length, long long *port)
{
    if (!peer_command_from_environment(&r->command, r->message, r->message_size)) {
        *r->kind = ERROR_INTERNAL;
        return false;
    }
    if (!r->command.from_environment && r->p->remote) {
        return run_fail(r, ERROR_UNSUPPORTED,
                        "placement = \"remote\" needs the harness's MSGBENCH_PEER_COMMAND (the server's place); it "
                        "is not set");
    }
    int error = 0;
    if (!peer_start(&r->server, &r->command, &error, r->message, r->message_size)) {
        /* out of processes, memory or descriptors is a resource; a bad command is not */
        bool limit = error == EAGAIN || error == ENOMEM || error == EMFILE || error == ENFILE;
        *r->kind = limit ? ERROR_RESOURCE : ERROR_INTERNAL;
        return false;
    }
    r->server_started = true;
    /* a server that is already gone shows as EOF on its stdout below */
    if (peer_write(&r->server, request_line, request_length)) {
        peer_write(&r->server, "\n", 1);
    }
    server_line_type type;
    long long unused = 0;
    if (!await_server(r, "{\"type\":\"listening\",\"port\":P}", SOCKET_LISTENING_LIMIT_S, &type, port, &unused)) {
        return false;
    }
    if (type != SERVER_LISTENING) {
        return type == SERVER_ERROR ? false : run_fail(r, ERROR_INTERNAL, "the server printed served before listening");
    }
    return true;
}

static bool connect_all(run_state *r, long long port)
{
    for (long long k = 0; k < r->p->sockets; k++) {
        char message[256];
        int fd = net_connect(r->command.host, (int)port, SOCKET_CONNECT_LIMIT_MS, message, sizeof message);
        if (fd < 0) {
            return run_fail(r, ERROR_INTERNAL, "socket %lld of %lld: %s", k, r->p->sockets, message);
        }
        r->clients[k].fd = fd;
        int error = net_configure(fd, r->p->mode == SOCKET_ECHO);
        if (error != 0) {
            return run_fail(r, ERROR_INTERNAL, "socket %lld: setsockopt: %s", k, strerror(error));
        }
    }
    return true;
}

/* One pair: its client runs on this thread, with the threadless watchdog, so the
 * process has one thread while it measures (socket_watchdog.h says why). */
static bool run_one_client(run_state *r, int64_t *gate_ns)
{
    shared_state *s = &r->shared;
    int error = watchdog_start(true);
    if (error != 0) {
        return run_fail(r, ERROR_RESOURCE, "cannot start the watchdog: %s", strerror(error));
    }
    pin_client(&r->clients[0]);
    *gate_ns = monotonic_ns();
    s->gate_open = true; /* nobody to wait for */
    run_client(&r->clients[0]);
    watchdog_stop();
    return true;
}

/* Starts the watchdog and one thread per socket, opens the gate when all are ready,
 * joins them and stops the watchdog. *gate_ns is when the gate opened. */
static bool run_clients(run_state *r, int64_t *gate_ns)
{
    /* the open loop's writer is a second thread anyway */
    if (socket_one_thread(r->p) && !socket_open_loop(r->p)) {
        return run_one_client(r, gate_ns);
    }
    shared_state *s = &r->shared;
    int error = watchdog_start(false);
    if (error != 0) {
        return run_fail(r, ERROR_RESOURCE, "cannot start the watchdog thread: %s", strerror(error));
    }
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, SOCKET_THREAD_STACK_BYTES);
    long long started = 0;
    for (; started < r->p->sockets; started++) {
        client *c = &r->clients[started];
        error = pthread_create(&c->thread, &attributes, client_main, c);
        if (error != 0) {
            break;
        }
    }
    pthread_attr_destroy(&attributes);
    pthread_mutex_lock(&s->lock);
    while (s->ready < started) {
        pthread_cond_wait(&s->cue, &s->lock);
    }
    s->abort = started < r->p->sockets;
    *gate_ns = monotonic_ns();
    s->start_ns = *gate_ns;
    s->gate_open = true;
    pthread_cond_broadcast(&s->cue);
    pthread_mutex_unlock(&s->lock);
    for (long long k = 0; k < started; k++) {
        pthread_join(r->clients[k].thread, NULL);
    }
    watchdog_stop();
    if (started < r->p->sockets) {
        return run_fail(r, ERROR_RESOURCE, "cannot start client thread %lld of %lld: %s", started + 1,
                        r->p->sockets, strerror(error));
    }
    return true;
}

static bool measure(run_state *r, const char *request_line, size_t request_length, socket_outcome *out)
{
    long long port = 0;
    if (!prepare(r) || !start_server(r, request_line, request_length, &port) || !connect_all(r, port)) {
        return false;
    }
    int64_t gate_ns = 0;
    if (!run_clients(r, &gate_ns)) {
        return false;
    }
    const socket_params *p = r->p;
    *out = (socket_outcome){.messages_per_socket = r->shared.messages, .send_buffers = r->shared.buffers,
                            .elapsed_ns = malloc((size_t)p->sockets * sizeof(int64_t)), .sockets = p->sockets,
                            .open_loop = socket_open_loop(p)};
    if (out->elapsed_ns == NULL) {
        return run_fail(r, ERROR_RESOURCE, "out of memory for %lld elapsed times", p->sockets);
    }
    const client *failed = NULL;
    int64_t last_end = gate_ns;
    for (long long k = 0; k < p->sockets; k++) {
        const client *c = &r->clients[k];
        if (c->failed && failed == NULL) {
            failed = c;
        }
        out->messages_sent += c->sent;
        out->bytes_sent += c->sent_bytes;
        out->messages_received += c->received;
        out->bytes_received += c->received_bytes;
        out->content_mismatches += c->mismatches;
        if (!histogram_merge(&out->latency, &c->latency)) {
            return run_fail(r, ERROR_RESOURCE, "out of memory for the latency histogram");
        }
        out->elapsed_ns[k] = c->end_ns - c->start_ns;
        last_end = c->end_ns > last_end ? c->end_ns : last_end;
    }
    out->wall_ns = last_end - gate_ns;
    server_line_type type;
    long long served_messages = 0;
    long long served_bytes = 0;
    if (failed != NULL) {
        /* the server may know why: relay its error if it prints one soon */
        if (await_server(r, "served or error", SERVER_EXPLAIN_LIMIT_S, &type, &served_messages, &served_bytes) &&
            type == SERVER_ERROR) {
            return false;
        }
        return run_fail(r, ERROR_INTERNAL, "%s", failed->error);
    }
    if (!await_server(r, "{\"type\":\"served\",...}", SOCKET_SERVED_LIMIT_S, &type, &served_messages,
                      &served_bytes)) {
        return false;
    }
    if (type != SERVER_SERVED) {
        return type == SERVER_ERROR ? false : run_fail(r, ERROR_INTERNAL, "the server printed listening twice");
    }
    if (p->mode == SOCKET_FLOW) {
        out->messages_received = served_messages;
        out->bytes_received = served_bytes;
    } else if (served_messages != out->messages_sent || served_bytes != out->bytes_sent) {
        fprintf(r->log, "c socket: the server echoed %lld messages (%lld bytes); the clients sent %lld (%lld)\n",
                served_messages, served_bytes, out->messages_sent, out->bytes_sent);
    }
    r->server_started = false;
    if (!peer_finish(&r->server, monotonic_ns() + SOCKET_EXIT_LIMIT_S * NS_PER_S)) {
        return run_fail(r, ERROR_INTERNAL, "the server did not exit within %d s after it printed served (killed)",
                        SOCKET_EXIT_LIMIT_S);
    }
    out->peak_rss_bytes = peak_rss_bytes();
    fprintf(r->log,
            "c socket: %s size=%lld sockets=%lld messages/socket=%lld send buffers=%zu nodelay=%s wall=%.3f ms "
            "server on %s port %lld\n",
            socket_mode_name(p->mode), p->size, p->sockets, out->messages_per_socket, out->send_buffers,
            p->mode == SOCKET_ECHO ? "on" : "off", (double)out->wall_ns / 1e6, r->command.host, port);
    return true;
}

bool socket_run(const socket_params *p, const char *request_line, size_t request_length, socket_outcome *out,
                error_kind *kind, char *message, size_t message_size, FILE *log)
{
    socket_ignore_sigpipe();
    *out = (socket_outcome){0};
    run_state r = {.p = p, .log = log, .kind = kind, .message = message, .message_size = message_size};
    bool ok = measure(&r, request_line, request_length, out);
    release(&r);
    if (!ok) {
        socket_outcome_free(out);
    }
    return ok;
}

void socket_outcome_free(socket_outcome *o)
{
    free(o->elapsed_ns);
    o->elapsed_ns = NULL;
    histogram_free(&o->latency);
}

size_t socket_measured(const socket_outcome *o, measured_fact out[SOCKET_MEASURED_MAX])
{
    out[0] = (measured_fact){.name = "elapsed_ns", .list = o->elapsed_ns, .list_length = (size_t)o->sockets};
    out[1] = (measured_fact){.name = "wall_ns", .value = o->wall_ns};
    out[2] = (measured_fact){.name = "peak_rss_bytes", .value = o->peak_rss_bytes};
    if (!o->open_loop) {
        return SOCKET_MEASURED_COUNT;
    }
    out[3] = (measured_fact){.name = "latency_max_ns", .value = o->latency.max_ns};
    return SOCKET_MEASURED_MAX;
}

void socket_verify(const socket_outcome *o, verify_count out[SOCKET_VERIFY_COUNT])
{
    out[0] = (verify_count){"messages_sent", o->messages_sent};
    out[1] = (verify_count){"messages_received", o->messages_received};
    out[2] = (verify_count){"bytes_sent", o->bytes_sent};
    out[3] = (verify_count){"bytes_received", o->bytes_received};
    out[4] = (verify_count){"content_mismatches", o->content_mismatches};
}
