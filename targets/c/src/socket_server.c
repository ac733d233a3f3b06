#define _GNU_SOURCE
#include "socket_server.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol.h"
#include "request.h"
#include "socket_net.h"
#include "socket_params.h"
#include "socket_pin.h"
#include "socket_watchdog.h"

#define MESSAGE_BYTES 1024
/* The worker writes the request as soon as it started the server. */
#define REQUEST_TIME_LIMIT_S 60
/* Each accept waits at most this long. */
#define ACCEPT_TIME_LIMIT_MS (60 * 1000)

typedef struct {
    pthread_t thread;
    int fd;
    io_watch watch;  /* fd's progress, for the watchdog */
    long long index; /* in accept order */
    const socket_params *params;
    bool started;
    /* the handler's own counts, read after join */
    long long messages;
    long long bytes;
    bool failed;
    char error[256];
} connection;

static void failf(connection *c, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void failf(connection *c, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(c->error, sizeof c->error, format, args);
    va_end(args);
    c->failed = true;
}

/* Echo: read one whole frame (the size is known from the request: one recv() call of
 * 4 + size bytes, repeated only if the kernel hands over less), check its header, write
 * it back with one send(). EOF between frames ends the connection. */
static void serve_echo(connection *c)
{
    size_t frame_bytes = FRAME_HEADER_BYTES + (size_t)c->params->size;
    unsigned char *frame = net_buffer_alloc(frame_bytes);
    if (frame == NULL) {
        failf(c, "connection %lld: out of memory for a %zu-byte frame", c->index, frame_bytes);
        return;
    }
    for (;;) {
        size_t got = 0;
        int error = 0;
        io_status status = net_read_exact(c->fd, &c->watch, frame, frame_bytes, &got, &error);
        if (status == IO_EOF && got == 0) {
            break; /* the client is done */
        }
        if (status != IO_OK) {
            failf(c, "connection %lld: reading message %lld: %s after %zu of %zu bytes", c->index,
                  c->messages + 1, net_status_text(status, error), got, frame_bytes);
            break;
        }
        uint32_t length = frame_get_length(frame);
        if (length != (uint32_t)c->params->size) {
            failf(c, "connection %lld: message %lld has length %u, expected size %lld", c->index, c->messages + 1,
                  length, c->params->size);
            break;
        }
        c->messages++;
        c->bytes += length;
        status = net_write_all(c->fd, &c->watch, frame, frame_bytes, NULL, &error);
        if (status != IO_OK) {
            failf(c, "connection %lld: echoing message %lld: %s", c->index, c->messages,
                  net_status_text(status, error));
            break;
        }
    }
    free(frame);
}

/* Flow: recv()s of up to SOCKET_FLOW_CHUNK_BYTES, frames parsed out of each chunk and
 * discarded, counted as they complete. At EOF (the client's shutdown) one byte goes
 * back: the client's clock stops when it reads it. */
static void serve_flow(connection *c)
{
    unsigned char *chunk = net_buffer_alloc(SOCKET_FLOW_CHUNK_BYTES);
    if (chunk == NULL) {
        failf(c, "connection %lld: out of memory for the read buffer", c->index);
        return;
    }
    unsigned char header[FRAME_HEADER_BYTES];
    size_t header_have = 0;
    uint64_t payload_left = 0;
    bool in_payload = false;
    for (;;) {
        ssize_t n = net_recv(c->fd, chunk, SOCKET_FLOW_CHUNK_BYTES, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        bool timed_out = n <= 0 && io_watch_timed_out(&c->watch); /* its EOF is the watchdog's */
        if (n < 0 || timed_out) {
            failf(c, "connection %lld: reading after %lld messages: %s", c->index, c->messages,
                  net_status_text(timed_out ? IO_TIMEOUT : IO_ERROR, errno));
            break;
        }
        if (n == 0) {
            if (in_payload || header_have > 0) {
                failf(c, "connection %lld: the client closed in the middle of message %lld", c->index,
                      c->messages + 1);
            } else {
                unsigned char ack = 'A';
                int error = 0;
                io_status status = net_write_all(c->fd, &c->watch, &ack, 1, NULL, &error);
                if (status != IO_OK) {
                    failf(c, "connection %lld: writing the ack: %s", c->index, net_status_text(status, error));
                }
            }
            break;
        }
        io_watch_moved(&c->watch, n);
        size_t at = 0;
        size_t length = (size_t)n;
        while (at < length) {
            if (!in_payload) {
                while (header_have < FRAME_HEADER_BYTES && at < length) {
                    header[header_have++] = chunk[at++];
                }
                if (header_have == FRAME_HEADER_BYTES) {
                    uint32_t size = frame_get_length(header);
                    if (size != (uint32_t)c->params->size) {
                        failf(c, "connection %lld: message %lld has length %u, expected size %lld", c->index,
                              c->messages + 1, size, c->params->size);
                        free(chunk);
                        return;
                    }
                    payload_left = size;
                    in_payload = true;
                    header_have = 0;
                }
            } else {
                size_t take = length - at < payload_left ? length - at : (size_t)payload_left;
                at += take;
                payload_left -= take;
                c->bytes += (long long)take;
                if (payload_left == 0) {
                    c->messages++;
                    in_payload = false;
                }
            }
        }
    }
    free(chunk);
}

static void *handle(void *arg)
{
    connection *c = arg;
    /* tuned: the client thread of this pair pins itself alike (connections are accepted
     * in the order the client connects them) */
    int pin_error = c->params->pin_pairs ? socket_pin_pair(c->index) : 0;
    if (pin_error != 0) {
        failf(c, "connection %lld: cannot pin the handler thread to CPU %d: %s", c->index,
              socket_pair_cpu(c->index), strerror(pin_error));
    } else {
        watchdog_add(&c->watch, c->fd);
        if (c->params->mode == SOCKET_ECHO) {
            serve_echo(c);
        } else {
            serve_flow(c);
        }
        watchdog_remove(&c->watch);
    }
    close(c->fd);
    c->fd = -1;
    return NULL;
}

static atomic_bool serving_done;
static int stdin_fd = -1;

/* The worker is gone (or done with us): unless we have answered, end the process.
 * Async-signal-safe. */
static void stdin_closed(void)
{
    if (!atomic_load(&serving_done)) {
        static const char note[] = "msgbench-c serve: stdin closed: exiting\n";
        ssize_t ignored = write(STDERR_FILENO, note, sizeof note - 1);
        (void)ignored;
        _exit(0);
    }
}

/* Reads the server's stdin until EOF, then stdin_closed. Raw read() on the descriptor,
 * not the FILE, so exit() never waits for a stdio lock this thread holds. */
static void *watch_stdin(void *unused)
{
    (void)unused;
    char sink[256];
    for (;;) {
        ssize_t n = read(stdin_fd, sink, sizeof sink);
        if (n == 0 || (n < 0 && errno != EINTR)) {
            break;
        }
    }
    stdin_closed();
    return NULL;
}

/* The threadless watcher: SIGIO when stdin turns readable (data or EOF); the handler
 * reads what is there without blocking. */
static void stdin_readable(int signal_number)
{
    (void)signal_number;
    int saved = errno;
    char sink[256];
    ssize_t n;
    do {
        n = read(stdin_fd, sink, sizeof sink);
    } while (n > 0 || (n < 0 && errno == EINTR));
    if (n == 0 || errno != EAGAIN) {
        stdin_closed(); /* EOF, or stdin is unusable */
    }
    errno = saved;
}

/* Watches stdin for EOF: a thread of its own, or (threadless, for a process whose only
 * thread serves: socket_watchdog.h says why) O_ASYNC and a SIGIO handler. 0 or an errno
 * value. */
static int watch_stdin_from_now(int fd, bool threadless)
{
    stdin_fd = fd;
    if (!threadless) {
        pthread_t watcher;
        int error = pthread_create(&watcher, NULL, watch_stdin, NULL);
        if (error == 0) {
            pthread_detach(watcher);
        }
        return error;
    }
    struct sigaction action = {.sa_handler = stdin_readable, .sa_flags = SA_RESTART};
    sigemptyset(&action.sa_mask);
    int flags = fcntl(fd, F_GETFL);
    if (sigaction(SIGIO, &action, NULL) != 0 || flags < 0 || fcntl(fd, F_SETOWN, getpid()) != 0 ||
        fcntl(fd, F_SETFL, flags | O_ASYNC | O_NONBLOCK) != 0) {
        return errno;
    }
    stdin_readable(SIGIO); /* an EOF that came before O_ASYNC sends no signal */
    return 0;
}

static void server_errorf(FILE *out, error_kind kind, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void server_errorf(FILE *out, error_kind kind, const char *format, ...)
{
    char message[MESSAGE_BYTES];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    protocol_error(out, kind, message);
}

/* The listening socket on 0.0.0.0:port; -1 after writing an error. */
static int listen_on(FILE *out, const socket_params *p, int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        server_errorf(out, ERROR_RESOURCE, "socket: %s", strerror(errno));
        return -1;
    }
    int on = 1;
    /* lets a fixed port be reused while old connections sit in TIME_WAIT; Linux still
     * refuses a port another socket listens on (EADDRINUSE) */
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)p->port),
                                  .sin_addr.s_addr = htonl(INADDR_ANY)};
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int error = errno;
        close(fd);
        if (error == EADDRINUSE) {
            server_errorf(out, ERROR_RESOURCE,
                          "port %lld is in use (bind: %s): choose another port, or port = 0 for any free port",
                          p->port, strerror(error));
        } else {
            server_errorf(out, ERROR_RESOURCE, "cannot bind 0.0.0.0 port %lld: %s", p->port, strerror(error));
        }
        return -1;
    }
    if (listen(fd, (int)p->sockets) != 0) {
        server_errorf(out, ERROR_RESOURCE, "listen: %s", strerror(errno));
        close(fd);
        return -1;
    }
    socklen_t size = sizeof address;
    if (getsockname(fd, (struct sockaddr *)&address, &size) != 0) {
        server_errorf(out, ERROR_INTERNAL, "getsockname: %s", strerror(errno));
        close(fd);
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

/* Accepts one connection within ACCEPT_TIME_LIMIT_MS: the fd, or -1 with a message. */
static int accept_one(int listener, long long index, long long total, char *message, size_t message_size)
{
    struct pollfd p = {.fd = listener, .events = POLLIN};
    int ready;
    do {
        ready = poll(&p, 1, ACCEPT_TIME_LIMIT_MS);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
        snprintf(message, message_size, "accepted %lld of %lld connections: no connection within %d s", index,
                 total, ACCEPT_TIME_LIMIT_MS / 1000);
        return -1;
    }
    int fd = ready < 0 ? -1 : accept4(listener, NULL, NULL, SOCK_CLOEXEC);
    if (fd < 0) {
        snprintf(message, message_size, "accepting connection %lld of %lld: %s", index + 1, total, strerror(errno));
    }
    return fd;
}

/* Listens, serves, reports. Errors are written to out. */
static void serve(FILE *out, FILE *log, const socket_params *p)
{
    char message[MESSAGE_BYTES];
    if (!net_reserve_fds(p->sockets + 8, message, sizeof message)) {
        protocol_error(out, ERROR_RESOURCE, message);
        return;
    }
    long long per_connection =
        p->mode == SOCKET_ECHO ? FRAME_HEADER_BYTES + p->size : SOCKET_FLOW_CHUNK_BYTES;
    long long physical = net_physical_memory_bytes();
    if (physical > 0 && per_connection * p->sockets > physical / 2) {
        server_errorf(out, ERROR_RESOURCE,
                      "the server's buffers (%lld sockets x %lld bytes) would exceed half of this host's memory "
                      "(%lld MiB)",
                      p->sockets, per_connection, physical >> 20);
        return;
    }
    connection *connections = calloc((size_t)p->sockets, sizeof *connections);
    if (connections == NULL) {
        protocol_error(out, ERROR_RESOURCE, "out of memory for the connection table");
        return;
    }
    /* one pair: its handler runs on this thread, the process's only one */
    const bool single = socket_one_thread(p);
    int error = watchdog_start(single);
    if (error != 0) {
        server_errorf(out, ERROR_RESOURCE, "cannot start the watchdog: %s", strerror(error));
        free(connections);
        return;
    }
    int port = 0;
    int listener = listen_on(out, p, &port);
    if (listener < 0) {
        watchdog_stop();
        free(connections);
        return;
    }
    fprintf(out, "{\"type\":\"listening\",\"port\":%d}\n", port);
    fflush(out);

    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, SOCKET_THREAD_STACK_BYTES);
    bool ok = true;
    error_kind kind = ERROR_INTERNAL;
    for (long long k = 0; k < p->sockets && ok; k++) {
        connection *c = &connections[k];
        *c = (connection){.fd = -1, .index = k, .params = p};
        c->fd = accept_one(listener, k, p->sockets, message, sizeof message);
        if (c->fd < 0) {
            ok = false;
            break;
        }
        error = net_configure(c->fd, p->mode == SOCKET_ECHO);
        if (error != 0) {
            snprintf(message, sizeof message, "connection %lld: setsockopt: %s", k, strerror(error));
            ok = false;
            break;
        }
        if (single) {
            break; /* handled below, once the listener is closed */
        }
        error = pthread_create(&c->thread, &attributes, handle, c);
        if (error != 0) {
            snprintf(message, sizeof message, "cannot start handler thread %lld of %lld: %s", k + 1, p->sockets,
                     strerror(error));
            kind = ERROR_RESOURCE;
            ok = false;
            break;
        }
        c->started = true;
    }
    pthread_attr_destroy(&attributes);
    close(listener);
    if (!ok) {
        /* the handlers already running end when their clients go; we do not wait */
        /* the handlers already started run on connections[]: leave it to the exit */
        protocol_error(out, kind, message);
        fflush(out);
        _exit(0);
    }

    if (single) {
        handle(&connections[0]);
    }
    long long messages = 0;
    long long bytes = 0;
    const connection *failed = NULL;
    for (long long k = 0; k < p->sockets; k++) {
        if (connections[k].started) {
            pthread_join(connections[k].thread, NULL);
        }
        messages += connections[k].messages;
        bytes += connections[k].bytes;
        if (connections[k].failed && failed == NULL) {
            failed = &connections[k];
        }
    }
    watchdog_stop();
    atomic_store(&serving_done, true); /* the worker may close our stdin once it has our answer */
    if (failed != NULL) {
        protocol_error(out, ERROR_INTERNAL, failed->error);
    } else {
        fprintf(out, "{\"type\":\"served\",\"messages\":%lld,\"bytes\":%lld}\n", messages, bytes);
        fflush(out);
    }
    fprintf(log, "c socket serve: %s, port %d, %lld connections, %lld messages, %lld bytes\n",
            socket_mode_name(p->mode), port, p->sockets, messages, bytes);
    free(connections);
}

int serve_main(FILE *in, FILE *out, FILE *log)
{
    socket_ignore_sigpipe();
    worker_request r;
    bool pin_option = false;
    socket_params p;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    /* a worker that never sends its request must not leave us behind */
    alarm(REQUEST_TIME_LIMIT_S);
    bool readable = request_read(in, &r, message, sizeof message);
    alarm(0);
    if (!readable) {
        protocol_error(out, ERROR_INTERNAL, message);
    } else if (strcmp(r.workload, "socket") != 0) {
        server_errorf(out, ERROR_UNSUPPORTED, "the c server half serves workload socket only, not %s", r.workload);
    } else if (!socket_options_read(r.options, &pin_option, message, sizeof message)) {
        protocol_error(out, ERROR_INTERNAL, message);
    } else if (!socket_params_read(r.params, &p, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
    } else {
        p.pin_pairs = socket_pins_pairs(&p, pin_option);
        int error = watch_stdin_from_now(fileno(in), socket_one_thread(&p));
        if (error != 0) {
            server_errorf(out, ERROR_RESOURCE, "cannot watch stdin: %s", strerror(error));
        } else {
            serve(out, log, &p);
            atomic_store(&serving_done, true); /* from here, stdin's EOF is no news */
        }
    }
    request_free(&r);
    fflush(out);
    return 0;
}
