/* The worker end to end through the protocol: a request in, JSON lines out. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "json.h"
#include "workloads.h"
#include "worker_run.h"

void parse_lines(char *text, worker_output *w)
{
    w->all_json = 1;
    char *line = text;
    while (line != NULL && *line != '\0') {
        char *newline = strchr(line, '\n');
        if (newline == NULL) {
            w->all_json = 0; /* every line ends in a newline */
            break;
        }
        *newline = '\0';
        char error[256];
        json_value *v = json_parse(line, strlen(line), error, sizeof error);
        if (v == NULL || v->type != JSON_OBJECT || w->count == MAX_LINES) {
            w->all_json = 0;
            json_free(v);
        } else {
            w->lines[w->count++] = v;
        }
        line = newline + 1;
    }
}

worker_output run_worker(const char *request)
{
    worker_output w = {0};
    char *output = NULL;
    size_t output_size = 0;
    FILE *in = fmemopen((void *)request, strlen(request), "r");
    FILE *out = open_memstream(&output, &output_size);
    FILE *log = fopen("/dev/null", "w");
    w.status = c_worker_main(in, out, log);
    fclose(in);
    fclose(out);
    fclose(log);
    parse_lines(output, &w);
    free(output);
    return w;
}

void release(worker_output *w)
{
    for (size_t i = 0; i < w->count; i++) {
        json_free(w->lines[i]);
    }
}

const char *string_of(const json_value *object, const char *key)
{
    const json_value *v = json_object_get(object, key);
    return v != NULL && v->type == JSON_STRING ? v->as.string.chars : "";
}

long long integer_of(const json_value *object, const char *key)
{
    long long n = -1;
    return json_as_integer(json_object_get(object, key), &n) ? n : -1;
}

/* The output is a hello then exactly one error of this kind whose message has this text. */
int answered_error(const char *request, const char *kind, const char *text)
{
    worker_output w = run_worker(request);
    int ok = w.status == 0 && w.all_json && w.count == 2 && strcmp(string_of(w.lines[0], "type"), "hello") == 0 &&
             strcmp(string_of(w.lines[1], "type"), "error") == 0 &&
             strcmp(string_of(w.lines[1], "kind"), kind) == 0 &&
             strstr(string_of(w.lines[1], "message"), text) != NULL;
    if (!ok) {
        fprintf(stderr, "unexpected answer to %s (%zu lines)\n", request, w.count);
        if (w.count == 2) {
            fprintf(stderr, "  got %s: %s\n", string_of(w.lines[1], "kind"), string_of(w.lines[1], "message"));
        }
    }
    release(&w);
    return ok;
}

#define FANIN_REQUEST(variant, payload, params)                                                        \
    "{\"workload\": \"fanin\", \"variant\": \"" variant "\", \"options\": {\"payload\": \"" payload "\"}, " \
    "\"params\": " params ", \"repetition\": 1}\n"
#define FANIN_PARAMS(senders, mix, method)                                                            \
    "{\"senders\": " senders ", \"duration_ms\": 40, \"mix\": " mix ", \"method\": \"" method "\", " \
    "\"memory_limit_mb\": 8192}"
#define MIX_1 "[{\"percent\": 100, \"kind\": \"message\", \"size\": 1}]"
#define MIX_MIXED \
    "[{\"percent\": 50, \"kind\": \"message\", \"size\": 1}, {\"percent\": 50, \"kind\": \"message\", \"size\": 100}]"

/* A result carries exactly the contract's raw facts: integers, no rates, no metrics. */
static void check_fanin_result(const char *request, const char *variant)
{
    worker_output w = run_worker(request);
    CHECK(w.status == 0 && w.all_json && w.count == 2);
    if (w.count != 2) {
        release(&w);
        return;
    }
    const json_value *hello = w.lines[0];
    CHECK(strcmp(string_of(hello, "type"), "hello") == 0);
    CHECK(strcmp(string_of(hello, "target"), "c") == 0);
    CHECK(strcmp(string_of(hello, "variant"), variant) == 0);
    CHECK(string_of(hello, "runtime_version")[0] != '\0');

    const json_value *result = w.lines[1];
    CHECK(strcmp(string_of(result, "type"), "result") == 0);
    CHECK(json_object_get(result, "metrics") == NULL);
    const json_value *measured = json_object_get(result, "measured");
    const char *names[] = {"send_ns", "receive_ns", "drain_ns", "cpu_ns", "peak_rss_bytes"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        CHECK(integer_of(measured, names[i]) >= 0);
    }
    CHECK(measured != NULL && measured->as.object.count == sizeof names / sizeof names[0]);
    CHECK(integer_of(measured, "send_ns") >= 40 * 1000000LL);
    /* not receive_ns >= send_ns: the last receive can precede the coordinator's stop stamp */
    CHECK(integer_of(measured, "receive_ns") > 0);
    CHECK(integer_of(measured, "cpu_ns") > 0 && integer_of(measured, "peak_rss_bytes") > 0);

    const json_value *verify = json_object_get(result, "verify");
    CHECK(integer_of(verify, "sent_message") > 0);
    CHECK(integer_of(verify, "received_message") == integer_of(verify, "sent_message"));
    CHECK(integer_of(verify, "sent_exit_signal") == 0);
    CHECK(integer_of(verify, "received_exit_signal") == 0);
    CHECK(integer_of(verify, "receiver_alive") == 1);
    release(&w);
}

/* The built binary, through a real pipe: stdout carries only the protocol lines. */
static void test_binary(void)
{
    FILE *pipe = popen("printf '%s\\n' '" FANIN_REQUEST("default", "slot", FANIN_PARAMS("2", MIX_1, "msgbench"))
                       "' | ./bin/msgbench-c 2>/dev/null; echo \"exit $?\"",
                       "r");
    CHECK(pipe != NULL);
    if (pipe == NULL) {
        return;
    }
    char text[4096];
    size_t n = fread(text, 1, sizeof text - 1, pipe);
    text[n] = '\0';
    pclose(pipe);
    char *status = strstr(text, "exit ");
    CHECK(status != NULL && strcmp(status, "exit 0\n") == 0);
    if (status == NULL) {
        return;
    }
    *status = '\0';
    worker_output w = {0};
    parse_lines(text, &w);
    CHECK(w.all_json && w.count == 2);
    CHECK(w.count == 2 && strcmp(string_of(w.lines[1], "type"), "result") == 0);
    release(&w);
}

/* The server half reads the request as the worker does: socket's options only. */
static void check_serve_answers(const char *request, const char *text)
{
    char command[1024];
    snprintf(command, sizeof command, "printf '%%s\\n' '%s' | ./bin/msgbench-c --serve 2>/dev/null", request);
    FILE *pipe = popen(command, "r");
    CHECK(pipe != NULL);
    if (pipe == NULL) {
        return;
    }
    char line[1024] = "";
    CHECK(fgets(line, sizeof line, pipe) != NULL && strstr(line, text) != NULL);
    pclose(pipe);
}

void test_worker(void)
{
    check_serve_answers("{\"workload\": \"socket\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\"}, "
                        "\"params\": {}}",
                        "\"kind\":\"internal\",\"message\":\"unknown option payload (known here: pin)\"");
    check_serve_answers("{\"workload\": \"fanin\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\"}, "
                        "\"params\": {}}",
                        "\"kind\":\"unsupported\",\"message\":\"the c server half serves workload socket only");

    /* the variant's name is only echoed: its options say what to run */
    check_fanin_result(FANIN_REQUEST("default", "slot", FANIN_PARAMS("2", MIX_1, "msgbench")), "default");
    check_fanin_result(FANIN_REQUEST("default", "slot", FANIN_PARAMS("4", MIX_MIXED, "otp")), "default");
    check_fanin_result(FANIN_REQUEST("malloc", "malloc", FANIN_PARAMS("3", MIX_MIXED, "msgbench")), "malloc");
    check_fanin_result("{\"workload\": \"fanin\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\"}, "
                       "\"params\": " FANIN_PARAMS("1", MIX_1, "msgbench") ", \"repetition\": 2, \"warmup\": true}",
                       "default");
    test_binary();

    CHECK(answered_error("{\"workload\": \"ring\", \"variant\": \"default\", \"options\": {}, \"params\": {\"n\": "
                         "1000, \"m\": 10, \"payload\": \"BOO!\"}, \"repetition\": 1}\n",
                         "unsupported", "implements fanin (N OS threads"));
    CHECK(answered_error("{\"workload\": \"chat\", \"variant\": \"default\", \"options\": {}, \"params\": {}, "
                         "\"repetition\": 1}",
                         "unsupported", "workload \"chat\" is not supported"));
    CHECK(answered_error(FANIN_REQUEST("default", "slot",
                                       FANIN_PARAMS("2", "[{\"percent\": 100, \"kind\": \"exit_signal\", \"size\": 1}]",
                                                    "msgbench")),
                         "unsupported", "exit signals"));
    CHECK(answered_error(FANIN_REQUEST("default", "slot", "{\"senders\": 100, \"duration_ms\": 40, \"mix\": "
                                                          "[{\"percent\": 100, \"kind\": \"message\", \"size\": "
                                                          "1000000}], \"method\": \"msgbench\", \"memory_limit_mb\": 64}"),
                         "resource", "memory_limit_mb = 64 is too small"));
    /* options: each workload reads its own and lists them in the error for any other */
    CHECK(answered_error(FANIN_REQUEST("default", "stack", FANIN_PARAMS("2", MIX_1, "msgbench")), "internal",
                         "option payload = \"stack\": expected one of slot, malloc"));
    CHECK(answered_error("{\"workload\": \"fanin\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\", "
                         "\"gomaxprocs\": 1}, \"params\": " FANIN_PARAMS("2", MIX_1, "msgbench") ", \"repetition\": 1}",
                         "internal", "unknown option gomaxprocs (known here: payload)"));
    CHECK(answered_error("{\"workload\": \"fanin\", \"variant\": \"tuned\", \"options\": {\"pin\": \"pair\"}, "
                         "\"params\": " FANIN_PARAMS("2", MIX_1, "msgbench") ", \"repetition\": 1}",
                         "internal", "unknown option pin (known here: payload)"));
    CHECK(answered_error("{\"workload\": \"socket\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\"}, "
                         "\"params\": {}, \"repetition\": 1}",
                         "internal", "unknown option payload (known here: pin)"));
    CHECK(answered_error("{\"workload\": \"socket\", \"variant\": \"tuned\", \"options\": {\"pin\": 0.5}, "
                         "\"params\": {}, \"repetition\": 1}",
                         "internal", "option pin = 0.5: expected one of none, pair"));
    /* payload unset: the slot, as the default variant runs */
    check_fanin_result("{\"workload\": \"fanin\", \"variant\": \"default\", \"options\": {}, \"params\": "
                       FANIN_PARAMS("2", MIX_1, "msgbench") ", \"repetition\": 1}",
                       "default");
    /* a request that is not the harness's: one internal error naming what is wrong */
    CHECK(answered_error("{\"workload\": \"fanin\", \"variant\": \"default\", \"params\": {}, \"repetition\": 1}",
                         "internal", "no options object"));
    CHECK(answered_error("{\"workload\": \"fanin\", \"variant\": \"default\", \"options\": {\"payload\": \"slot\"}, "
                         "\"params\": {}, \"repetition\": 1}",
                         "internal", "params.senders is absent"));
    CHECK(answered_error("{\"workload\": \"fanin\"", "internal", "not valid JSON"));
    CHECK(answered_error("", "internal", "not valid JSON"));
    CHECK(answered_error("[1]\n", "internal", "request field variant is absent or not a string"));
}
