/* The kit's own functions: options, params, the protocol's lines, the request and the
 * worker's run, each on text in memory (fmemopen, open_memstream). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "json.h"
#include "measure.h"
#include "options.h"
#include "params.h"
#include "protocol.h"
#include "worker.h"

static json_value *parse(const char *text)
{
    char error[256];
    return json_parse(text, strlen(text), error, sizeof error);
}

static void test_options(void)
{
    static const char *const known[] = {"payload", "pin"};
    static const char *const payloads[] = {"slot", "malloc"};
    char message[256];
    json_value *o = parse("{\"payload\": \"malloc\", \"turbo\": 1, \"colour\": \"red\"}");
    CHECK(!options_only(o, known, 2, message, sizeof message));
    CHECK(strcmp(message, "unknown option turbo, colour (known here: payload, pin)") == 0);
    CHECK(!options_only(o, NULL, 0, message, sizeof message));
    CHECK(strstr(message, "(known here: none)") != NULL);
    CHECK(option_choice(o, "payload", payloads, 2, 0, message, sizeof message) == 1);
    CHECK(option_choice(o, "absent", payloads, 2, 0, message, sizeof message) == 0);
    CHECK(option_choice(o, "colour", payloads, 2, 0, message, sizeof message) == -1);
    CHECK(strcmp(message, "option colour = \"red\": expected one of slot, malloc (target.toml)") == 0);
    CHECK(option_choice(o, "turbo", payloads, 2, 0, message, sizeof message) == -1);
    CHECK(strstr(message, "option turbo = 1: expected") != NULL);
    json_free(o);
    o = parse("{\"pin\": \"pair\"}");
    CHECK(options_only(o, known, 2, message, sizeof message));
    json_free(o);
    /* a message that does not fit is cut, never overrun */
    o = parse("{\"a_rather_long_option_name\": 0.5}");
    char small[16];
    CHECK(!options_only(o, known, 2, small, sizeof small));
    CHECK(strlen(small) == sizeof small - 1 && strncmp(small, "unknown option ", 15) == 0);
    json_free(o);
}

static void test_params(void)
{
    char message[256];
    json_value *p = parse("{\"n\": 1000, \"rate\": 0.5, \"name\": \"x\", \"mix\": [1], \"half\": 1.5}");
    param_reader r = param_reader_of(p);
    CHECK(param_integer(&r, "n") == 1000 && param_number(&r, "rate") == 0.5);
    CHECK(strcmp(param_string(&r, "name"), "x") == 0 && param_array(&r, "mix") != NULL);
    CHECK(param_reader_ok(&r, "params.", message, sizeof message));
    param_integer(&r, "half");
    param_integer(&r, "absent");
    CHECK(!param_reader_ok(&r, "params.", message, sizeof message));
    CHECK(strstr(message, "params.half is absent or not an integer") == message); /* the first miss */
    json_free(p);
}

/* What a stream wrote, NUL-terminated; free() it. */
typedef struct {
    char *text;
    size_t length;
    FILE *stream;
} captured;

static void test_lines(void)
{
    captured c = {0};
    c.stream = open_memstream(&c.text, &c.length);
    protocol_hello(c.stream, "c", "gcc \"12\"", "default");
    protocol_error(c.stream, ERROR_RESOURCE, "");
    const int64_t list[] = {3, 4};
    measured_fact measured[] = {{.name = "send_ns", .value = 7}, {.name = "laps", .list = list, .list_length = 2}};
    verify_count verify[] = {{"sent_message", 9}};
    protocol_result(c.stream, measured, 2, verify, 1);
    fclose(c.stream);
    CHECK(strcmp(c.text, "{\"type\":\"hello\",\"target\":\"c\",\"runtime_version\":\"gcc \\\"12\\\"\","
                         "\"variant\":\"default\"}\n"
                         "{\"type\":\"error\",\"kind\":\"resource\",\"message\":\"(no message)\"}\n"
                         "{\"type\":\"result\",\"measured\":{\"send_ns\":7,\"laps\":[3,4]},"
                         "\"verify\":{\"sent_message\":9}}\n") == 0);
    free(c.text);
    CHECK(protocol_error_kind("unsupported") == ERROR_UNSUPPORTED && protocol_error_kind("x") == ERROR_INTERNAL);
}

static void test_clocks(void)
{
    int64_t start = monotonic_ns();
    sleep_until_ns(start + 2000000);
    CHECK(monotonic_ns() - start >= 2000000);
    CHECK(process_cpu_ns() > 0);
    CHECK(peak_rss_bytes() > 0);
}

/* A workload for worker_run: echoes what it read of the request as its result. */
static void echo_run(const worker_request *r, FILE *out, FILE *log)
{
    (void)log;
    verify_count verify[] = {{"warmup", r->warmup}, {"params", (long long)r->params->as.object.count}};
    protocol_result(out, NULL, 0, verify, 2);
}

static const workload_entry workloads[] = {{"echo", echo_run}};
static const worker_spec spec = {.target = "kit", .runtime_version = "test", .workloads = workloads,
                                 .workload_count = 1, .implements = "echo only"};

/* worker_run on request; its stdout, to free(). */
static char *answer(const char *request)
{
    captured c = {0};
    FILE *in = fmemopen((void *)request, strlen(request), "r");
    c.stream = open_memstream(&c.text, &c.length);
    CHECK(worker_run(&spec, in, c.stream, stderr) == 0);
    fclose(in);
    fclose(c.stream);
    return c.text;
}

static void test_worker_run(void)
{
    char *out = answer("{\"workload\": \"echo\", \"variant\": \"v\", \"options\": {}, \"params\": {\"a\": 1}, "
                       "\"warmup\": true}\nignored\n");
    CHECK(strcmp(out, "{\"type\":\"hello\",\"target\":\"kit\",\"runtime_version\":\"test\",\"variant\":\"v\"}\n"
                      "{\"type\":\"result\",\"measured\":{},\"verify\":{\"warmup\":1,\"params\":1}}\n") == 0);
    free(out);
    out = answer("{\"workload\": \"ring\", \"variant\": \"v\", \"options\": {}, \"params\": {}}");
    CHECK(strstr(out, "\"kind\":\"unsupported\",\"message\":\"workload \\\"ring\\\" is not supported: the kit "
                      "target implements echo only\"") != NULL);
    free(out);
    out = answer("{\"workload\": \"echo\", \"variant\": \"v\", \"params\": {}}");
    CHECK(strstr(out, "\"variant\":\"v\"}\n{\"type\":\"error\",\"kind\":\"internal\",\"message\":\"the request "
                      "has no options object") != NULL);
    free(out);
    out = answer("[1]");
    CHECK(strstr(out, "\"variant\":\"unknown\"") != NULL && strstr(out, "request field variant is absent") != NULL);
    free(out);
    out = answer("{\"workload\"");
    CHECK(strstr(out, "the request is not valid JSON") != NULL);
    free(out);
}

void test_kit(void)
{
    test_options();
    test_params();
    test_lines();
    test_clocks();
    test_worker_run();
}
