/* The socket workload: params, the prepared frames, and real runs through the protocol
 * with the built server (./bin/msgbench-c --serve), including the failures: a port in
 * use, a server that exits at once, one that dies mid-sequence, a server whose stdin
 * closes. */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "check.h"
#include "json.h"
#include "params_test.h"
#include "socket_client.h"
#include "socket_net.h"
#include "socket_params.h"
#include "worker.h"
#include "worker_run.h"

#define SERVE_COMMAND "[\"./bin/msgbench-c\", \"--serve\"]"

static bool decode_socket(const json_value *params, void *out, error_kind *kind, char *message, size_t size)
{
    return socket_params_decode(params, out, kind, message, size);
}

static int decode(const char *text, socket_params *p, error_kind *kind, char *message, size_t size)
{
    return params_decode_text(decode_socket, text, p, kind, message, size);
}

static int rejected(const char *text, error_kind expected_kind, const char *expected)
{
    socket_params p;
    return params_rejected(decode_socket, text, &p, expected_kind, expected);
}

#define PARAMS(mode, size, total, sockets, data, placement, check, port)                                    \
    "{\"mode\": " mode ", \"size\": " size ", \"total_bytes\": " total ", \"sockets\": " sockets            \
    ", \"data\": " data ", \"placement\": " placement ", \"check_content\": " check ", \"port\": " port "}"
#define GOOD(mode, size, total, sockets) \
    PARAMS("\"" mode "\"", size, total, sockets, "\"binary\"", "\"local\"", "1", "0")

static void test_params(void)
{
    socket_params p;
    error_kind kind = ERROR_INTERNAL;
    char message[1024] = "";
    CHECK(decode(PARAMS("\"flow\"", "1024", "4194304", "16", "\"binary\"", "\"remote\"", "0", "5555"), &p, &kind,
                 message, sizeof message));
    CHECK(p.mode == SOCKET_FLOW && p.size == 1024 && p.total_bytes == 4194304 && p.sockets == 16);
    CHECK(p.remote && !p.check_content && p.port == 5555);
    CHECK(socket_messages(&p) == 4096);
    CHECK(decode(GOOD("echo", "67108864", "17179869184", "1024"), &p, &kind, message, sizeof message));
    CHECK(p.mode == SOCKET_ECHO && p.check_content && !p.remote && socket_messages(&p) == 256);
    CHECK(decode(GOOD("echo", "7", "1000", "1"), &p, &kind, message, sizeof message));
    CHECK(socket_messages(&p) == 142);
    CHECK(decode(GOOD("echo", "1000", "1000", "1"), &p, &kind, message, sizeof message));
    CHECK(socket_messages(&p) == 1);

    CHECK(rejected(GOOD("echo", "0", "1000", "1"), ERROR_BAD_PARAMS,
                   "size = 0 is out of range: size must be an integer between 1 and 67108864"));
    CHECK(rejected(GOOD("echo", "67108865", "17179869184", "1"), ERROR_BAD_PARAMS, "size = 67108865 is out of range"));
    CHECK(rejected(GOOD("echo", "2000", "1000", "1"), ERROR_BAD_PARAMS,
                   "size = 2000 is out of range: size must not exceed total_bytes (1000)"));
    CHECK(rejected(GOOD("echo", "10", "17179869185", "1"), ERROR_BAD_PARAMS, "total_bytes = 17179869185"));
    CHECK(rejected(GOOD("echo", "10", "1000", "0"), ERROR_BAD_PARAMS,
                   "sockets = 0 is out of range: sockets must be an integer between 1 and 1024"));
    CHECK(rejected(GOOD("echo", "10", "1000", "1025"), ERROR_BAD_PARAMS, "sockets = 1025 is out of range"));
    CHECK(rejected(GOOD("echo", "10", "1000", "1.5"), ERROR_BAD_PARAMS, "sockets = 1.5 is out of range"));
    CHECK(rejected(GOOD("ping", "10", "1000", "1"), ERROR_BAD_PARAMS,
                   "mode = \"ping\" is not valid: mode must be \"echo\" or \"flow\""));
    CHECK(rejected(PARAMS("\"echo\"", "10", "1000", "1", "\"list\"", "\"local\"", "1", "0"), ERROR_UNSUPPORTED,
                   "data = \"list\" is not supported"));
    CHECK(rejected(PARAMS("\"echo\"", "10", "1000", "1", "\"text\"", "\"local\"", "1", "0"), ERROR_BAD_PARAMS,
                   "data = \"text\" is not valid"));
    CHECK(rejected(PARAMS("\"echo\"", "10", "1000", "1", "\"binary\"", "\"moon\"", "1", "0"), ERROR_BAD_PARAMS,
                   "placement = \"moon\" is not valid"));
    CHECK(rejected(PARAMS("\"echo\"", "10", "1000", "1", "\"binary\"", "\"local\"", "2", "0"), ERROR_BAD_PARAMS,
                   "check_content = 2 is out of range"));
    CHECK(rejected(PARAMS("\"echo\"", "10", "1000", "1", "\"binary\"", "\"local\"", "1", "65536"), ERROR_BAD_PARAMS,
                   "port = 65536 is out of range: port must be an integer between 0 and 65535"));
    CHECK(rejected("{\"mode\": \"echo\", \"size\": 10, \"total_bytes\": 1000, \"sockets\": 1, \"data\": \"binary\", "
                   "\"placement\": \"local\", \"check_content\": 1}",
                   ERROR_BAD_PARAMS, "port is missing"));
    CHECK(rejected("{\"mode\": \"echo\", \"size\": 10, \"total_bytes\": 1000, \"sockets\": 1, \"data\": \"binary\", "
                   "\"placement\": \"local\", \"check_content\": 1, \"port\": 0, \"nodelay\": true}",
                   ERROR_BAD_PARAMS, "nodelay is not a parameter of socket"));
}

static void test_frames(void)
{
    CHECK(socket_send_buffers(16) == 251);
    CHECK(socket_send_buffers(65536) == 251); /* 251 x 64 KiB fit 16 MiB */
    CHECK(socket_send_buffers(1 << 20) == 15);
    CHECK(socket_send_buffers(67108864) == 2);
    unsigned char header[FRAME_HEADER_BYTES];
    frame_put_length(header, 0x01020304u);
    CHECK(header[0] == 1 && header[1] == 2 && header[2] == 3 && header[3] == 4);
    CHECK(frame_get_length(header) == 0x01020304u);
}

static void use_server(const char *command)
{
    setenv("MSGBENCH_PEER_COMMAND", command, 1);
    setenv("MSGBENCH_PEER_CWD", ".", 1);
    setenv("MSGBENCH_PEER_HOST", "127.0.0.1", 1);
}

static void request_for(char *buffer, size_t size, const char *variant, const char *params)
{
    snprintf(buffer, size, "{\"workload\": \"socket\", \"variant\": \"%s\", \"params\": %s, \"repetition\": 1}\n",
             variant, params);
}

/* A real run: exact counts, no mismatch, every metric there and positive. */
static void check_run(const char *mode, long long size, long long total, long long sockets, int check_content)
{
    char params[512];
    snprintf(params, sizeof params,
             "{\"mode\": \"%s\", \"size\": %lld, \"total_bytes\": %lld, \"sockets\": %lld, \"data\": \"binary\", "
             "\"placement\": \"local\", \"check_content\": %d, \"port\": 0}",
             mode, size, total, sockets, check_content);
    char request[1024];
    request_for(request, sizeof request, "default", params);
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
    const json_value *metrics = json_object_get(w.lines[1], "metrics");
    const char *names[] = {"elapsed_ms", "round_trip_us", "bandwidth_bytes_per_s", "msgs_per_s", "peak_rss_bytes"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const json_value *m = json_object_get(metrics, names[i]);
        CHECK(m != NULL && m->type == JSON_NUMBER && m->as.number.value > 0.0);
    }
    CHECK(metrics != NULL && metrics->as.object.count == SOCKET_METRIC_COUNT);
    release(&w);
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
static void test_server_stdin_closes(void)
{
    char request[1024];
    request_for(request, sizeof request, "default", GOOD("echo", "10", "100", "1"));
    request[strlen(request) - 1] = '\0';
    char command[2048];
    snprintf(command, sizeof command,
             "printf '%%s\\n' '%s' | timeout 10 ./bin/msgbench-c --serve >/dev/null 2>&1; echo \"exit $?\"", request);
    char *text = shell_output(command);
    CHECK(text != NULL && strcmp(text, "exit 0\n") == 0);
    free(text);
}

static void test_failures(void)
{
    char request[1024];
    request_for(request, sizeof request, "default", GOOD("echo", "2000", "1000", "1"));
    CHECK(answered_error(request, "bad_params", "size must not exceed total_bytes"));
    request_for(request, sizeof request, "default",
                PARAMS("\"flow\"", "10", "1000", "1", "\"list\"", "\"local\"", "1", "0"));
    CHECK(answered_error(request, "unsupported", "data = \"list\" is not supported"));
    request_for(request, sizeof request, "malloc", GOOD("echo", "10", "1000", "1"));
    CHECK(answered_error(request, "unsupported", "variant \"malloc\" does not implement socket"));

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

/* target.toml: the serve argv, and socket among the default variant's workloads. */
static void test_target_toml(void)
{
    FILE *toml = fopen("target.toml", "r");
    CHECK(toml != NULL);
    if (toml == NULL) {
        return;
    }
    char line[512];
    int serve = 0;
    int in_default = 0;
    int socket_in_default = 0;
    while (fgets(line, sizeof line, toml) != NULL) {
        serve = serve || strcmp(line, "serve = [\"bin/msgbench-c\", \"--serve\"]\n") == 0;
        if (line[0] == '[') {
            in_default = strcmp(line, "[variants.default]\n") == 0;
        }
        if (in_default && strncmp(line, "workloads = ", 12) == 0 && strstr(line, "\"socket\"") != NULL) {
            socket_in_default = 1;
        }
    }
    fclose(toml);
    CHECK(serve);
    CHECK(socket_in_default);
}

void test_socket(void)
{
    test_params();
    test_frames();
    test_target_toml();
    use_server(SERVE_COMMAND);
    check_run("echo", 100, 10000, 1, 1);
    check_run("echo", 100, 10000, 4, 1);
    check_run("echo", 7, 1000, 4, 0);
    check_run("flow", 100, 10000, 1, 1);
    check_run("flow", 100, 10000, 4, 1);
    check_run("flow", 7, 1000, 4, 0);
    check_run("flow", 1 << 20, 4 << 20, 2, 0); /* frames larger than the server's read chunk */
    check_run("echo", 1 << 20, 4 << 20, 2, 1);
    test_failures();
    test_port_in_use();
    test_server_stdin_closes();
}

/* `test-msgbench-c --fake-server N`: a server that listens, prints listening, accepts
 * one connection, echoes (flow: reads) N frames of the request's size and exits. */
int fake_server(long long echoes)
{
    size_t length = 0;
    bool too_long = false;
    char *line = worker_read_request_line(stdin, &length, &too_long);
    char error[256];
    json_value *request = line != NULL ? json_parse(line, length, error, sizeof error) : NULL;
    long long size = 0;
    const json_value *params = json_object_get(request, "params");
    if (request == NULL || !json_as_integer(json_object_get(params, "size"), &size) || size < 1) {
        return 1;
    }
    const json_value *mode = json_object_get(params, "mode");
    bool echo = mode != NULL && mode->type == JSON_STRING && strcmp(mode->as.string.chars, "echo") == 0;
    json_free(request);
    free(line);
    int port = 0;
    int listener = occupy_port(&port);
    if (listener < 0) {
        return 1;
    }
    printf("{\"type\":\"listening\",\"port\":%d}\n", port);
    fflush(stdout);
    int fd = accept(listener, NULL, NULL);
    if (fd >= 0) {
        net_configure(fd, true); /* time limits: the test cannot hang here */
    }
    size_t frame_bytes = FRAME_HEADER_BYTES + (size_t)size;
    unsigned char *frame = malloc(frame_bytes);
    for (long long i = 0; fd >= 0 && frame != NULL && i < echoes; i++) {
        int code = 0;
        if (net_read_exact(fd, frame, frame_bytes, NULL, &code) != IO_OK ||
            (echo && net_write_all(fd, frame, frame_bytes, NULL, &code) != IO_OK)) {
            break;
        }
    }
    free(frame);
    return 0; /* the connection closes with the process */
}
