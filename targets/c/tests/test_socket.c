/* The socket workload: params, the prepared frames, and real runs through the protocol
 * with the built server (./bin/msgbench-c --serve), including the failures: a port in
 * use, a server that exits at once, one that dies mid-sequence, a server whose stdin
 * closes, a stalled peer on either side (the watchdog, with a 1 s timeout). */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "suites.h"
#include "json.h"
#include "measure.h"
#include "socket_client.h"
#include "socket_net.h"
#include "socket_params.h"
#include "socket_payload.h"
#include "socket_peer.h"
#include "socket_pin.h"
#include "socket_watchdog.h"
#include "request.h"
#include "worker_run.h"

#define SERVE_COMMAND "[\"./bin/msgbench-c\", \"--serve\"]"
#define NS_PER_S INT64_C(1000000000)
#define TIMEOUT_VARIABLE "MSGBENCH_C_SOCKET_IO_TIMEOUT_S"
/* How long `--fake-server -1` holds a connection it never answers: longer than a 1 s
 * timeout takes to fire (at most 2 s), so without the watchdog a test sees its EOF, not
 * the timeout, and fails instead of hanging. */
#define STALL_HOLD_S 5

#define PARAMS(mode, size, total, sockets, data, placement, check, port)                                    \
    "{\"mode\": " mode ", \"size\": " size ", \"total_bytes\": " total ", \"sockets\": " sockets            \
    ", \"data\": " data ", \"placement\": " placement ", \"check_content\": " check ", \"port\": " port "}"
#define GOOD(mode, size, total, sockets) \
    PARAMS("\"" mode "\"", size, total, sockets, "\"binary\"", "\"local\"", "1", "0")

static int read_text(const char *text, socket_params *p, error_kind *kind, char *message, size_t size)
{
    char error[256];
    json_value *v = json_parse(text, strlen(text), error, sizeof error);
    int ok = v != NULL && socket_params_read(v, p, kind, message, size);
    json_free(v);
    return ok;
}

/* Typed access only: the values as given; data = list unsupported; a params object that
 * is not the harness's. */
static void test_params_read(void)
{
    socket_params p;
    error_kind kind = ERROR_RESOURCE;
    char message[1024] = "";
    CHECK(read_text(PARAMS("\"flow\"", "1024", "4194304", "16", "\"binary\"", "\"remote\"", "0", "5555"), &p, &kind,
                    message, sizeof message));
    CHECK(p.mode == SOCKET_FLOW && p.size == 1024 && p.total_bytes == 4194304 && p.sockets == 16);
    CHECK(p.remote && !p.check_content && p.port == 5555);
    CHECK(socket_messages(&p) == 4096);
    CHECK(read_text(GOOD("echo", "7", "1000", "1"), &p, &kind, message, sizeof message));
    CHECK(p.mode == SOCKET_ECHO && p.check_content && !p.remote && socket_messages(&p) == 142);
    CHECK(read_text(GOOD("echo", "1000", "1000", "1"), &p, &kind, message, sizeof message));
    CHECK(socket_messages(&p) == 1);
    CHECK(socket_pins_pairs(&p, true) && !socket_pins_pairs(&p, false));
    p.mode = SOCKET_FLOW;
    CHECK(!socket_pins_pairs(&p, true));

    CHECK(!read_text(PARAMS("\"echo\"", "10", "1000", "1", "\"list\"", "\"local\"", "1", "0"), &p, &kind, message,
                     sizeof message));
    CHECK(kind == ERROR_UNSUPPORTED && strstr(message, "data = \"list\" is not supported") != NULL);
    CHECK(!read_text("{\"mode\": \"echo\", \"size\": 10, \"total_bytes\": 1000, \"sockets\": 1, \"data\": \"binary\", "
                     "\"placement\": \"local\", \"check_content\": 1}",
                     &p, &kind, message, sizeof message));
    CHECK(kind == ERROR_INTERNAL && strstr(message, "params.port is absent or not an integer") != NULL);

    /* rate: absent at its default (closed loop), else the open loop's */
    CHECK(read_text(GOOD("echo", "7", "1000", "1"), &p, &kind, message, sizeof message));
    CHECK(p.rate == 0 && !socket_open_loop(&p));
    CHECK(read_text("{\"mode\": \"echo\", \"size\": 10, \"total_bytes\": 1000, \"sockets\": 1, \"data\": "
                    "\"binary\", \"placement\": \"local\", \"check_content\": 1, \"port\": 0, \"rate\": 2500.5}",
                    &p, &kind, message, sizeof message));
    CHECK(p.rate == 2500.5 && socket_open_loop(&p));
}

static void test_frames(void)
{
    CHECK(socket_send_buffers(16) == 251);
    CHECK(socket_send_buffers(1024) == 251);
    CHECK(socket_send_buffers(65536) == 7); /* 7 x (4 + 64 KiB) fit 512 KiB */
    CHECK(socket_send_buffers(1 << 20) == 2);
    CHECK(socket_send_buffers(67108864) == 2);
    unsigned char header[FRAME_HEADER_BYTES];
    frame_put_length(header, 0x01020304u);
    CHECK(header[0] == 1 && header[1] == 2 && header[2] == 3 && header[3] == 4);
    CHECK(frame_get_length(header) == 0x01020304u);
    CHECK(net_buffer_stride(20) == 64 && net_buffer_stride(64) == 64 && net_buffer_stride(65540) == 65600);
    unsigned char *buffer = net_buffer_alloc(65540);
    CHECK(buffer != NULL && (uintptr_t)buffer % 4096 == 0);
    free(buffer);
}

static void use_server(const char *command)
{
    setenv("MSGBENCH_PEER_COMMAND", command, 1);
    setenv("MSGBENCH_PEER_CWD", ".", 1);
    setenv("MSGBENCH_PEER_HOST", "127.0.0.1", 1);
}

#define DEFAULT_OPTIONS "{}"
#define TUNED_OPTIONS "{\"pin\": \"pair\"}"

static void request_with(char *buffer, size_t size, const char *variant, const char *options, const char *params)
{
    snprintf(buffer, size,
             "{\"workload\": \"socket\", \"variant\": \"%s\", \"options\": %s, \"params\": %s, "
             "\"repetition\": 1}\n",
             variant, options, params);
}

static void request_for(char *buffer, size_t size, const char *variant, const char *params)
{
    request_with(buffer, size, variant, DEFAULT_OPTIONS, params);
}

/* A real run of a variant (its options): exact counts, no mismatch, every metric there
 * and positive. */
static void check_variant_run(const char *variant, const char *options, const char *mode, long long size,
                              long long total, long long sockets, int check_content)
{
    char params[512];
    snprintf(params, sizeof params,
             "{\"mode\": \"%s\", \"size\": %lld, \"total_bytes\": %lld, \"sockets\": %lld, \"data\": \"binary\", "
             "\"placement\": \"local\", \"check_content\": %d, \"port\": 0}",
             mode, size, total, sockets, check_content);
    char request[1024];
    request_with(request, sizeof request, variant, options, params);
    worker_output w = run_worker(request);
    int shape = w.status == 0 && w.all_json && w.count == 2 && strcmp(string_of(w.lines[1], "type"), "result") == 0;
    CHECK(shape);
    if (!shape) {
        fprintf(stderr, "socket %s size %lld sockets %lld: %s\n", mode, size, sockets,
                w.count == 2 ? string_of(w.lines[1], "message") : "(no answer)");
        release(&w);
        return;
    }
    long long messages = (total / size > 1 ? total / size : 1) * sockets;
    const json_value *verify = json_object_get(w.lines[1], "verify");
    CHECK(integer_of(verify, "messages_sent") == messages);
    CHECK(integer_of(verify, "messages_received") == messages);
    CHECK(integer_of(verify, "bytes_sent") == messages * size);
    CHECK(integer_of(verify, "bytes_received") == messages * size);
    CHECK(integer_of(verify, "content_mismatches") == 0);
    CHECK(verify != NULL && verify->as.object.count == SOCKET_VERIFY_COUNT);
    CHECK(json_object_get(w.lines[1], "metrics") == NULL);
    const json_value *measured = json_object_get(w.lines[1], "measured");
    const json_value *elapsed = json_object_get(measured, "elapsed_ns");
    CHECK(elapsed != NULL && elapsed->type == JSON_ARRAY && (long long)elapsed->as.array.count == sockets);
    long long wall_ns = integer_of(measured, "wall_ns");
    for (size_t k = 0; elapsed != NULL && elapsed->type == JSON_ARRAY && k < elapsed->as.array.count; k++) {
        long long ns = -1;
        CHECK(json_as_integer(elapsed->as.array.items[k], &ns) && ns > 0 && ns <= wall_ns);
    }
    CHECK(integer_of(measured, "peak_rss_bytes") > 0);
    CHECK(measured != NULL && measured->as.object.count == SOCKET_MEASURED_COUNT);
    release(&w);
}

static void check_run(const char *mode, long long size, long long total, long long sockets, int check_content)
{
    check_variant_run("default", DEFAULT_OPTIONS, mode, size, total, sockets, check_content);
}

/* The check of every payload byte: each position of payloads across the vector blocks'
 * edges and the tail, at the offset a payload has behind its header. */
static void test_payload_check(void)
{
    static unsigned char frame[FRAME_HEADER_BYTES + 65536];
    const size_t sizes[] = {0, 1, 15, 16, 127, 128, 129, 300, 65536};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        unsigned char *payload = frame + FRAME_HEADER_BYTES;
        memset(payload, 0x5a, n);
        CHECK(payload_is_all(payload, n, 0x5a));
        CHECK(payload_is_all(payload, n, 0x5b) == (n == 0));
        bool caught = true;
        for (size_t i = 0; i < n; i += n > 300 ? 997 : 1) {
            payload[i] ^= 0x01;
            caught = caught && !payload_is_all(payload, n, 0x5a);
            payload[i] ^= 0x01;
        }
        payload[n > 0 ? n - 1 : 0] ^= 0x80;
        caught = caught && (n == 0 || !payload_is_all(payload, n, 0x5a));
        CHECK(caught);
    }
}

/* An echo that comes back changed is counted: a server that inverts one payload byte of
 * the second echo. check_content = 0 catches it at the first or last byte only. */
static void check_corrupted_echo(const char *flip, int check_content, long long mismatches)
{
    char command[256];
    snprintf(command, sizeof command, "[\"./bin/test-msgbench-c\", \"--fake-server\", \"100\", \"%s\"]", flip);
    use_server(command);
    char params[512];
    snprintf(params, sizeof params,
             "{\"mode\": \"echo\", \"size\": 100, \"total_bytes\": 10000, \"sockets\": 1, \"data\": \"binary\", "
             "\"placement\": \"local\", \"check_content\": %d, \"port\": 0}",
             check_content);
    char request[1024];
    request_for(request, sizeof request, "default", params);
    worker_output w = run_worker(request);
    bool result = w.status == 0 && w.all_json && w.count == 2 && strcmp(string_of(w.lines[1], "type"), "result") == 0;
    CHECK(result);
    if (result) {
        const json_value *verify = json_object_get(w.lines[1], "verify");
        CHECK(integer_of(verify, "messages_received") == 100);
        CHECK(integer_of(verify, "content_mismatches") == mismatches);
    }
    release(&w);
    use_server(SERVE_COMMAND);
}

/* The tuned variant's placement: pair k's CPU is the (k mod n)-th allowed one, the same
 * in both halves, and a pinned thread runs there and only there. */
static void *pinned_thread(void *arg)
{
    long long index = *(long long *)arg;
    int error = socket_pin_pair(index);
    cpu_set_t now;
    CPU_ZERO(&now);
    bool one = error == 0 && pthread_getaffinity_np(pthread_self(), sizeof now, &now) == 0 && CPU_COUNT(&now) == 1;
    *(long long *)arg = one && CPU_ISSET(socket_pair_cpu(index), &now) && sched_getcpu() == socket_pair_cpu(index);
    return NULL;
}

static void test_pair_placement(void)
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    CHECK(sched_getaffinity(0, sizeof allowed, &allowed) == 0);
    int n = CPU_COUNT(&allowed);
    int lowest = 0;
    while (lowest < CPU_SETSIZE && !CPU_ISSET(lowest, &allowed)) {
        lowest++;
    }
    CHECK(socket_pair_cpu(0) == lowest);
    for (long long k = 0; k < 2LL * n + 3; k++) {
        int cpu = socket_pair_cpu(k);
        CHECK(cpu >= 0 && CPU_ISSET(cpu, &allowed));
        CHECK(socket_pair_cpu(k + n) == cpu); /* pair k and pair k + n share a CPU */
        CHECK(n == 1 || socket_pair_cpu(k + 1) != cpu);
    }
    for (long long k = 0; k < 3; k++) {
        long long result = k;
        pthread_t thread;
        CHECK(pthread_create(&thread, NULL, pinned_thread, &result) == 0);
        pthread_join(thread, NULL);
        CHECK(result == 1);
    }
}

/* A listening socket on 0.0.0.0, any port: its fd and *port. */
static int occupy_port(int *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t size = sizeof address;
    if (fd < 0 || bind(fd, (struct sockaddr *)&address, sizeof address) != 0 || listen(fd, 1) != 0 ||
        getsockname(fd, (struct sockaddr *)&address, &size) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    *port = ntohs(address.sin_port);
    return fd;
}

/* Runs a shell command and returns its stdout (caller frees). */
static char *shell_output(const char *command)
{
    FILE *pipe = popen(command, "r");
    if (pipe == NULL) {
        return NULL;
    }
    char *text = calloc(1, 8192);
    if (text != NULL) {
        size_t n = fread(text, 1, 8191, pipe);
        text[n] = '\0';
    }
    pclose(pipe);
    return text;
}

static void test_port_in_use(void)
{
    int port = 0;
    int fd = occupy_port(&port);
    CHECK(fd >= 0);
    if (fd < 0) {
        return;
    }
    char params[512];
    char request[1024];
    char expected[64];
    snprintf(expected, sizeof expected, "port %d is in use", port);
    snprintf(params, sizeof params,
             "{\"mode\": \"echo\", \"size\": 10, \"total_bytes\": 100, \"sockets\": 1, \"data\": \"binary\", "
             "\"placement\": \"local\", \"check_content\": 1, \"port\": %d}",
             port);
    request_for(request, sizeof request, "default", params);
    /* relayed by the worker */
    CHECK(answered_error(request, "resource", expected));

    /* and the server itself, with its stdin open a little while */
    request[strlen(request) - 1] = '\0';
    char command[2048];
    snprintf(command, sizeof command, "(printf '%%s\\n' '%s'; sleep 0.3) | ./bin/msgbench-c --serve 2>/dev/null",
             request);
    char *text = shell_output(command);
    worker_output w = {0};
    if (text != NULL) {
        parse_lines(text, &w);
    }
    CHECK(w.all_json && w.count == 1);
    CHECK(w.count == 1 && strcmp(string_of(w.lines[0], "type"), "error") == 0 &&
          strcmp(string_of(w.lines[0], "kind"), "resource") == 0 &&
          strstr(string_of(w.lines[0], "message"), expected) != NULL);
    release(&w);
    free(text);
    close(fd);
}

/* The server exits as soon as its stdin closes, even while it waits for connections. */
static void check_server_stdin_closes(const char *params)
{
    char request[1024];
    request_for(request, sizeof request, "default", params);
    request[strlen(request) - 1] = '\0';
    char command[2048];
    snprintf(command, sizeof command,
             "printf '%%s\\n' '%s' | timeout 10 ./bin/msgbench-c --serve >/dev/null 2>&1; echo \"exit $?\"", request);
    char *text = shell_output(command);
    CHECK(text != NULL && strcmp(text, "exit 0\n") == 0);
    free(text);
}

/* One pair (the threadless watcher: SIGIO) and two (a watcher thread). */
static void test_server_stdin_closes(void)
{
    check_server_stdin_closes(GOOD("echo", "10", "100", "1"));
    check_server_stdin_closes(GOOD("echo", "10", "100", "2"));
}

static void test_failures(void)
{
    char request[1024];
    request_for(request, sizeof request, "default",
                PARAMS("\"flow\"", "10", "1000", "1", "\"list\"", "\"local\"", "1", "0"));
    CHECK(answered_error(request, "unsupported", "data = \"list\" is not supported"));

    request_for(request, sizeof request, "default", GOOD("echo", "10", "1000", "2"));
    use_server("[\"false\"]");
    CHECK(answered_error(request, "internal", "closed its stdout before it printed a {\"type\":\"listening\""));
    use_server("[\"./bin/no-such-server\"]");
    CHECK(answered_error(request, "internal", "cannot start the server ./bin/no-such-server"));
    use_server("bin/msgbench-c --serve");
    CHECK(answered_error(request, "internal", "MSGBENCH_PEER_COMMAND must be a non-empty JSON array of strings"));

    /* a server that echoes 3 messages, then exits */
    use_server("[\"./bin/test-msgbench-c\", \"--fake-server\", \"3\"]");
    request_for(request, sizeof request, "default", GOOD("echo", "10", "1000", "1"));
    CHECK(answered_error(request, "internal", "the server closed socket 0 after 3 of 100 messages"));
    request_for(request, sizeof request, "default", GOOD("flow", "100000", "100000000", "1"));
    CHECK(answered_error(request, "internal", "the server closed socket 0 after"));
    use_server(SERVE_COMMAND);
}

/* The timeout: SOCKET_IO_TIMEOUT_S, or a whole number of seconds up to that from the
 * environment, read when the watchdog starts; stopping does not wait for its next look. */
static void test_watchdog_timeout(void)
{
    static const struct {
        const char *value; /* NULL: unset */
        int seconds;
    } cases[] = {{"2", 2}, {"60", 60}, {"0", 60}, {"61", 60}, {"2s", 60}, {"", 60}, {NULL, 60}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].value != NULL) {
            setenv(TIMEOUT_VARIABLE, cases[i].value, 1);
        } else {
            unsetenv(TIMEOUT_VARIABLE);
        }
        CHECK(watchdog_start(false) == 0);
        int64_t start_ns = monotonic_ns();
        watchdog_stop();
        CHECK(monotonic_ns() - start_ns < NS_PER_S / 2);
        CHECK(watchdog_timeout_s() == cases[i].seconds);
        char text[64];
        snprintf(text, sizeof text, "no progress within %d s", cases[i].seconds);
        CHECK(strcmp(net_status_text(IO_TIMEOUT, 0), text) == 0);
    }
}

/* Both kinds of watchdog in this process: a blocked recv() on a stalled connection
 * comes back timed out within the timeout and two looks; the threadless one leaves no
 * thread and gives its signal's handler back when it stops. */
static void check_watchdog_times_out(bool threadless)
{
    setenv(TIMEOUT_VARIABLE, "1", 1);
    int pair[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0);
    /* a backstop: without the watchdog the read fails after 8 s instead of hanging */
    struct timeval backstop = {.tv_sec = 8};
    setsockopt(pair[0], SOL_SOCKET, SO_RCVTIMEO, &backstop, sizeof backstop);
    struct sigaction before;
    sigaction(SIGRTMIN, NULL, &before);
    CHECK(watchdog_start(threadless) == 0);
    static io_watch watch;
    watchdog_add(&watch, pair[0]);
    int64_t start_ns = monotonic_ns();
    unsigned char byte = 0;
    int error = 0;
    CHECK(net_read_exact(pair[0], &watch, &byte, 1, NULL, &error) == IO_TIMEOUT);
    int64_t waited_ns = monotonic_ns() - start_ns;
    CHECK(waited_ns >= NS_PER_S && waited_ns < 4 * NS_PER_S);
    watchdog_remove(&watch);
    watchdog_stop();
    struct sigaction after;
    sigaction(SIGRTMIN, NULL, &after);
    CHECK(after.sa_handler == before.sa_handler);
    close(pair[0]);
    close(pair[1]);
    unsetenv(TIMEOUT_VARIABLE);
}

/* A server that accepts but never answers (`--fake-server -1`): the client's watchdog
 * times the socket out, echo blocked in recv() and flow blocked in send() (the server
 * reads nothing), with the usual message. */
static void test_client_stalled(void)
{
    setenv(TIMEOUT_VARIABLE, "1", 1);
    use_server("[\"./bin/test-msgbench-c\", \"--fake-server\", \"-1\"]");
    char request[1024];
    request_for(request, sizeof request, "default", GOOD("echo", "10", "1000", "1"));
    int64_t start_ns = monotonic_ns();
    CHECK(answered_error(request, "internal",
                         "socket 0: no progress within 1 s after 0 of 100 messages (reading an echo)"));
    CHECK(monotonic_ns() - start_ns < 4 * NS_PER_S);
    request_for(request, sizeof request, "default", GOOD("flow", "65536", "67108864", "1"));
    worker_output w = run_worker(request);
    const char *message = w.count == 2 ? string_of(w.lines[1], "message") : "";
    CHECK(strcmp(string_of(w.lines[1], "type"), "error") == 0);
    CHECK(strncmp(message, "socket 0: no progress within 1 s after ", 39) == 0);
    CHECK(strstr(message, " of 1024 messages (sending)") != NULL);
    release(&w);
    unsetenv(TIMEOUT_VARIABLE);
    use_server(SERVE_COMMAND);
}

/* The server's watchdog: a client that connects, sends half a frame (header and 3 of 10
 * payload bytes) and stalls makes the server report the timeout: echo in
 * net_read_exact, flow in its own recv() loop. */
static void check_server_stalled(const char *mode, const char *expected)
{
    setenv(TIMEOUT_VARIABLE, "1", 1);
    use_server(SERVE_COMMAND);
    char params[512];
    char request[1024];
    snprintf(params, sizeof params, GOOD("%s", "10", "1000", "1"), mode);
    request_for(request, sizeof request, "default", params);
    peer_command command;
    peer server;
    char message[256];
    int error = 0;
    bool started = peer_command_from_environment(&command, message, sizeof message);
    started = started && peer_start(&server, &command, &error, message, sizeof message);
    CHECK(started);
    if (started && peer_write(&server, request, strlen(request))) {
        char line[PEER_LINE_BYTES];
        char text[256];
        json_value *v = NULL;
        if (peer_read_line(&server, monotonic_ns() + 10 * NS_PER_S, line, sizeof line) == PEER_LINE) {
            v = json_parse(line, strlen(line), text, sizeof text);
        }
        long long port = integer_of(v, "port");
        json_free(v);
        CHECK(port > 0);
        int fd = port > 0 ? net_connect("127.0.0.1", (int)port, 10000, message, sizeof message) : -1;
        static const unsigned char half[] = {0, 0, 0, 10, 1, 1, 1};
        CHECK(fd >= 0 && send(fd, half, sizeof half, MSG_NOSIGNAL) == (ssize_t)sizeof half);
        v = NULL;
        /* the timeout fires within 2 s of the last byte */
        if (peer_read_line(&server, monotonic_ns() + 4 * NS_PER_S, line, sizeof line) == PEER_LINE) {
            v = json_parse(line, strlen(line), text, sizeof text);
        }
        CHECK(strcmp(string_of(v, "type"), "error") == 0 && strstr(string_of(v, "message"), expected) != NULL);
        json_free(v);
        if (fd >= 0) {
            close(fd);
        }
    }
    if (started) {
        peer_finish(&server, monotonic_ns() + 5 * NS_PER_S);
        peer_command_free(&command);
    }
    unsetenv(TIMEOUT_VARIABLE);
}

/* An open-loop run (100 messages of 100 bytes per socket at rate): its result, NULL when
 * it is not one (released by the caller with release). */
static worker_output open_loop_run(long long sockets, int rate)
{
    char params[512];
    snprintf(params, sizeof params,
             "{\"mode\": \"echo\", \"size\": 100, \"total_bytes\": 10000, \"sockets\": %lld, \"data\": "
             "\"binary\", \"placement\": \"local\", \"check_content\": 1, \"port\": 0, \"rate\": %d}",
             sockets, rate);
    char request[1024];
    request_for(request, sizeof request, "default", params);
    return run_worker(request);
}

/* The latency histogram's count, and how many latencies lie in buckets below `below_ns`. */
static long long latencies(const json_value *result, int64_t below_ns, long long *below)
{
    const json_value *pairs = json_object_get(json_object_get(result, "histograms"), "latency_ns");
    long long count = 0;
    *below = 0;
    for (size_t i = 0; pairs != NULL && pairs->type == JSON_ARRAY && i < pairs->as.array.count; i++) {
        const json_value *pair = pairs->as.array.items[i];
        long long bucket = -1;
        long long n = -1;
        bool ok = pair->type == JSON_ARRAY && pair->as.array.count == 2 &&
                  json_as_integer(pair->as.array.items[0], &bucket) && json_as_integer(pair->as.array.items[1], &n);
        CHECK(ok && n > 0);
        count += n;
        *below += bucket < histogram_index(below_ns) ? n : 0;
    }
    return count;
}

/* Open loop with the real server: at 2,000/s in all the last of each socket's 100 messages
 * is due 99 intervals after the first (a closed loop takes a few ms for them), every echo
 * has one latency, and a fast server keeps most of them small (generous: the machine may
 * be loaded). */
static void check_open_loop(long long sockets)
{
    worker_output w = open_loop_run(sockets, 2000);
    bool result = w.status == 0 && w.all_json && w.count == 2 && strcmp(string_of(w.lines[1], "type"), "result") == 0;
    CHECK(result);
    if (result) {
        const json_value *verify = json_object_get(w.lines[1], "verify");
        const json_value *measured = json_object_get(w.lines[1], "measured");
        CHECK(integer_of(verify, "messages_received") == 100 * sockets);
        CHECK(integer_of(verify, "content_mismatches") == 0);
        CHECK(measured->as.object.count == SOCKET_MEASURED_MAX && integer_of(measured, "latency_max_ns") > 0);
        const json_value *elapsed = json_object_get(measured, "elapsed_ns");
        long long last_due_ns = 99 * (long long)sockets * NS_PER_S / 2000;
        for (size_t k = 0; elapsed != NULL && k < elapsed->as.array.count; k++) {
            long long ns = -1;
            CHECK(json_as_integer(elapsed->as.array.items[k], &ns) && ns >= last_due_ns);
        }
        long long small = 0;
        CHECK(latencies(w.lines[1], 10 * 1000 * 1000, &small) == 100 * sockets);
        CHECK(small >= 50 * sockets);
    } else {
        fprintf(stderr, "open loop, %lld sockets: %s\n", sockets, w.count == 2 ? string_of(w.lines[1], "message") : "");
    }
    release(&w);
}

/* A server that holds all 100 messages before it echoes any (--hold-server; a closed loop
 * would wait forever): the writer does not wait for echoes, and message 0's latency runs
 * from its intended time, so it is at least the 99 ms (at 1,000/s) until message 99 was
 * due; message 99's is small, so half of them lie below 50 ms. */
static void test_open_loop_charges_a_server_that_falls_behind(void)
{
    use_server("[\"./bin/test-msgbench-c\", \"--hold-server\"]");
    worker_output w = open_loop_run(1, 1000);
    bool result = w.status == 0 && w.all_json && w.count == 2 && strcmp(string_of(w.lines[1], "type"), "result") == 0;
    CHECK(result);
    if (result) {
        CHECK(integer_of(json_object_get(w.lines[1], "measured"), "latency_max_ns") >= 99 * 1000 * 1000);
        long long below = 0;
        CHECK(latencies(w.lines[1], 49 * 1000 * 1000, &below) == 100 && below <= 51);
        CHECK(integer_of(json_object_get(w.lines[1], "verify"), "content_mismatches") == 0);
    }
    release(&w);
    use_server(SERVE_COMMAND);
}

void test_socket(void)
{
    test_params_read();
    test_frames();
    test_payload_check();
    use_server(SERVE_COMMAND);
    check_run("echo", 100, 10000, 1, 1);
    check_run("echo", 100, 10000, 4, 1);
    check_run("echo", 7, 1000, 4, 0);
    check_run("flow", 100, 10000, 1, 1);
    check_run("flow", 100, 10000, 4, 1);
    check_run("flow", 7, 1000, 4, 0);
    check_run("flow", 1 << 20, 4 << 20, 2, 0); /* frames larger than the server's read chunk */
    check_run("echo", 1 << 20, 4 << 20, 2, 1);
    check_open_loop(1);
    check_open_loop(3);
    test_open_loop_charges_a_server_that_falls_behind();
    test_pair_placement();
    check_variant_run("tuned", TUNED_OPTIONS, "echo", 100, 10000, 1, 1);
    check_variant_run("tuned", TUNED_OPTIONS, "echo", 100, 10000, 3, 1); /* more pairs than CPUs here */
    check_variant_run("tuned", TUNED_OPTIONS, "flow", 100, 10000, 2, 1);
    check_corrupted_echo("50", 1, 1);
    check_corrupted_echo("50", 0, 0);
    check_corrupted_echo("0", 0, 1);
    check_corrupted_echo("99", 1, 1);
    test_failures();
    test_port_in_use();
    test_server_stdin_closes();
    test_watchdog_timeout();
    check_watchdog_times_out(false);
    check_watchdog_times_out(true);
    test_client_stalled();
    check_server_stalled("echo", "connection 0: reading message 1: no progress within 1 s after 7 of 14 bytes");
    check_server_stalled("flow", "connection 0: reading after 0 messages: no progress within 1 s");
}

/* A test server's start, as the real server's: reads the request from stdin into *p,
 * listens on a free port and says listening. The listener, or -1 when a step failed. */
static int listen_as_server(socket_params *p)
{
    worker_request r;
    char message[256];
    error_kind kind;
    bool readable = request_read(stdin, &r, message, sizeof message) &&
                    socket_params_read(r.params, p, &kind, message, sizeof message);
    request_free(&r);
    int port = 0;
    int listener = readable ? occupy_port(&port) : -1;
    if (listener >= 0) {
        printf("{\"type\":\"listening\",\"port\":%d}\n", port);
        fflush(stdout);
    }
    return listener;
}

/* `test-msgbench-c --fake-server N [FLIP]`: a server that listens, prints listening,
 * accepts one connection, echoes (flow: reads) N frames of the request's size and exits.
 * With N = -1 it reads and writes nothing: it exits when the client shuts the connection
 * down, or after STALL_HOLD_S. With FLIP it inverts payload byte FLIP of the second echo
 * and, having echoed all N, says served as the real server does. It has no watchdog: the
 * worker kills it at the latest SOCKET_EXIT_LIMIT_S after it closed its stdin. */
int fake_server(long long echoes, long long flip)
{
    socket_params p;
    int listener = listen_as_server(&p);
    if (listener < 0) {
        return 1;
    }
    int fd = accept(listener, NULL, NULL);
    if (fd >= 0) {
        net_configure(fd, true);
    }
    if (fd >= 0 && echoes < 0) {
        struct pollfd hangup = {.fd = fd, .events = POLLRDHUP};
        poll(&hangup, 1, STALL_HOLD_S * 1000);
    }
    size_t frame_bytes = FRAME_HEADER_BYTES + (size_t)p.size;
    unsigned char *frame = malloc(frame_bytes);
    io_watch watch = {0};
    long long echoed = 0;
    for (; fd >= 0 && frame != NULL && echoed < echoes; echoed++) {
        int code = 0;
        if (net_read_exact(fd, &watch, frame, frame_bytes, NULL, &code) != IO_OK) {
            break;
        }
        if (echoed == 1 && flip >= 0 && flip < p.size) {
            frame[FRAME_HEADER_BYTES + flip] ^= 0xff;
        }
        if (p.mode == SOCKET_ECHO && net_write_all(fd, &watch, frame, frame_bytes, NULL, &code) != IO_OK) {
            break;
        }
    }
    if (flip >= 0 && echoed == echoes) {
        printf("{\"type\":\"served\",\"messages\":%lld,\"bytes\":%lld}\n", echoed, echoed * p.size);
        fflush(stdout);
    }
    free(frame);
    return 0; /* the connection closes with the process */
}

/* `test-msgbench-c --hold-server`: a server that listens, accepts one connection, reads
 * every message of the request before it echoes any, echoes them all, says served and
 * exits when the client closes. */
int hold_server(void)
{
    socket_params p;
    int listener = listen_as_server(&p);
    if (listener < 0) {
        return 1;
    }
    int fd = accept(listener, NULL, NULL);
    size_t bytes = (size_t)socket_messages(&p) * (FRAME_HEADER_BYTES + (size_t)p.size);
    unsigned char *held = malloc(bytes);
    io_watch watch = {0};
    int code = 0;
    bool echoed = fd >= 0 && held != NULL && net_configure(fd, true) == 0 &&
                  net_read_exact(fd, &watch, held, bytes, NULL, &code) == IO_OK &&
                  net_write_all(fd, &watch, held, bytes, NULL, &code) == IO_OK;
    if (echoed) {
        printf("{\"type\":\"served\",\"messages\":%lld,\"bytes\":%lld}\n", socket_messages(&p),
               socket_messages(&p) * p.size);
        fflush(stdout);
        unsigned char end;
        while (recv(fd, &end, 1, 0) > 0) { /* until the client closes */
        }
    }
    free(held);
    return echoed ? 0 : 1; /* the connection closes with the process */
}
