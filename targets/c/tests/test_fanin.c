#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "fanin.h"
#include "fanin_params.h"
#include "json.h"
#include "params_test.h"

#define DEFAULT_MIX "[{\"percent\": 100, \"kind\": \"message\", \"size\": 1}]"

static bool decode_fanin(const json_value *params, void *out, error_kind *kind, char *message, size_t size)
{
    return fanin_params_decode(params, out, kind, message, size);
}

/* Decodes params given as JSON text; returns 1 on success, else stores kind/message. */
static int decode(const char *text, fanin_params *p, error_kind *kind, char *message, size_t size)
{
    return params_decode_text(decode_fanin, text, p, kind, message, size);
}

/* True if params are rejected with this kind and a message containing expected. */
static int rejected(const char *text, error_kind expected_kind, const char *expected)
{
    fanin_params p;
    return params_rejected(decode_fanin, text, &p, expected_kind, expected);
}

static void test_params(void)
{
    fanin_params p;
    error_kind kind = ERROR_INTERNAL;
    char message[1024] = "";
    CHECK(decode("{\"senders\": 4, \"duration_ms\": 1000, \"mix\": [{\"percent\": 50, \"kind\": \"message\", "
                 "\"size\": 1}, {\"percent\": 50.0, \"kind\": \"message\", \"size\": 100}], \"method\": \"otp\", "
                 "\"memory_limit_mb\": 8192}",
                 &p, &kind, message, sizeof message));
    CHECK(p.senders == 4 && p.duration_ms == 1000 && p.mix_length == 2 && p.method == METHOD_OTP);
    CHECK(p.mix[1].size == 100 && p.mix[1].kind == SIGNAL_MESSAGE && p.mix[0].percent == 50.0);
    CHECK(p.memory_limit_mb == 8192);

    /* 33.3 + 33.3 + 33.4 is not exactly 100 in binary: accepted */
    CHECK(decode("{\"senders\": 1, \"duration_ms\": 1, \"mix\": [{\"percent\": 33.3, \"kind\": \"message\", "
                 "\"size\": 1}, {\"percent\": 33.3, \"kind\": \"message\", \"size\": 2}, {\"percent\": 33.4, "
                 "\"kind\": \"message\", \"size\": 3}], \"method\": \"msgbench\", \"memory_limit_mb\": 64}",
                 &p, &kind, message, sizeof message));

#define PARAMS(senders, duration, mix, method, memory)                                                   \
    "{\"senders\": " senders ", \"duration_ms\": " duration ", \"mix\": " mix ", \"method\": " method \
    ", \"memory_limit_mb\": " memory "}"

    CHECK(rejected(PARAMS("0", "100", DEFAULT_MIX, "\"msgbench\"", "8192"), ERROR_BAD_PARAMS,
                   "senders = 0 is out of range: senders must be an integer between 1 and 4095"));
    CHECK(rejected(PARAMS("4096", "100", DEFAULT_MIX, "\"msgbench\"", "8192"), ERROR_BAD_PARAMS,
                   "senders = 4096 is out of range"));
    CHECK(rejected(PARAMS("\"two\"", "100", DEFAULT_MIX, "\"msgbench\"", "8192"), ERROR_BAD_PARAMS,
                   "senders = \"two\" is out of range"));
    CHECK(rejected(PARAMS("1.5", "100", DEFAULT_MIX, "\"msgbench\"", "8192"), ERROR_BAD_PARAMS, "senders = 1.5"));
    CHECK(rejected(PARAMS("1", "0", DEFAULT_MIX, "\"msgbench\"", "8192"), ERROR_BAD_PARAMS,
                   "duration_ms = 0 is out of range: duration_ms must be an integer between 1 and 3600000"));
    CHECK(rejected(PARAMS("1", "100", "[]", "\"msgbench\"", "8192"), ERROR_BAD_PARAMS, "mix = [] is not valid"));
    CHECK(rejected(PARAMS("1", "100", "{}", "\"msgbench\"", "8192"), ERROR_BAD_PARAMS, "mix = {} is not valid"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 90, \"kind\": \"message\", \"size\": 1}]", "\"msgbench\"",
                          "8192"),
                   ERROR_BAD_PARAMS, "percents add to 90"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 0, \"kind\": \"message\", \"size\": 1}]", "\"msgbench\"",
                          "8192"),
                   ERROR_BAD_PARAMS, "mix[0].percent = 0 is out of range"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 100, \"kind\": \"letter\", \"size\": 1}]", "\"msgbench\"",
                          "8192"),
                   ERROR_BAD_PARAMS, "mix[0].kind = \"letter\" is not valid"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 100, \"kind\": \"message\", \"size\": 0}]", "\"msgbench\"",
                          "8192"),
                   ERROR_BAD_PARAMS, "mix[0].size = 0 is out of range"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 100, \"kind\": \"message\"}]", "\"msgbench\"", "8192"),
                   ERROR_BAD_PARAMS, "mix[0].size is missing"));
    CHECK(rejected(PARAMS("1", "100", "[{\"percent\": 100, \"kind\": \"message\", \"size\": 1, \"x\": 1}]",
                          "\"msgbench\"", "8192"),
                   ERROR_BAD_PARAMS, "mix[0].x is not a known field"));
    CHECK(rejected(PARAMS("1", "100", DEFAULT_MIX, "\"fast\"", "8192"), ERROR_BAD_PARAMS,
                   "method = \"fast\" is not valid"));
    CHECK(rejected(PARAMS("1", "100", DEFAULT_MIX, "\"msgbench\"", "63"), ERROR_BAD_PARAMS,
                   "memory_limit_mb = 63 is out of range"));
    CHECK(rejected("{\"senders\": 1, \"duration_ms\": 100, \"mix\": " DEFAULT_MIX ", \"method\": \"msgbench\"}",
                   ERROR_BAD_PARAMS, "memory_limit_mb is missing"));
    CHECK(rejected("{\"senders\": 1, \"duration_ms\": 100, \"mix\": " DEFAULT_MIX
                   ", \"method\": \"msgbench\", \"memory_limit_mb\": 64, \"queue\": \"off_heap\"}",
                   ERROR_BAD_PARAMS, "queue is not a parameter of fanin"));
    CHECK(rejected(PARAMS("1", "100",
                          "[{\"percent\": 50, \"kind\": \"exit_signal\", \"size\": 1}, {\"percent\": 50, \"kind\": "
                          "\"message\", \"size\": 1}]",
                          "\"msgbench\"", "8192"),
                   ERROR_UNSUPPORTED, "exit signals are an Erlang notion"));
#undef PARAMS
}

static fanin_params params_with(long long senders, long long size, long long memory_limit_mb)
{
    fanin_params p = {.senders = senders, .duration_ms = 20, .mix_length = 1, .method = METHOD_MSGBENCH,
                      .memory_limit_mb = memory_limit_mb};
    p.mix[0] = (mix_entry){100.0, SIGNAL_MESSAGE, size};
    return p;
}

static void test_queue_capacity(void)
{
    fanin_params p = params_with(64, 1, 8192);
    CHECK(fanin_queue_capacity(&p) == FANIN_QUEUE_CAPACITY);
    p = params_with(64, 1000, 8192); /* 1024 * 8 kB fits in the ring's payload budget */
    CHECK(fanin_queue_capacity(&p) == FANIN_QUEUE_CAPACITY);
    p = params_with(1, 100000, 8192); /* 800 kB: 256 fit in 256 MiB */
    CHECK(fanin_queue_capacity(&p) == 256);
    p = params_with(64, 1000000, 8192); /* 8 MB: 32 fit in 256 MiB */
    CHECK(fanin_queue_capacity(&p) == 32);
    p = params_with(1, 1000000, 64); /* memory limit: (4 + 2) * 8 MB <= 64 MiB */
    CHECK(fanin_queue_capacity(&p) == 4);
    p = params_with(100, 1000000, 64);
    CHECK(fanin_queue_capacity(&p) == 0);
}

static void test_metrics(void)
{
    fanin_params p = params_with(2, 1, 8192);
    p.duration_ms = 1000;
    fanin_outcome o = {.sent = {3000000, 0}, .received = {3000000, 0}, .receiver_alive = 1,
                       .start_ns = 1000000000, .senders_stopped_ns = 2000000000,
                       .last_receive_ns = 2500000000, .cpu_ns = 1500000000, .peak_rss_bytes = 4096};
    metric m[FANIN_METRIC_COUNT];
    fanin_metrics(&p, &o, m);
    CHECK(strcmp(m[0].name, "send_throughput_per_s") == 0 && m[0].value == 3000000.0);
    CHECK(strcmp(m[1].name, "receive_throughput_per_s") == 0 && m[1].value == 2000000.0);
    CHECK(strcmp(m[2].name, "send_duration_ms") == 0 && m[2].value == 1000.0);
    CHECK(strcmp(m[3].name, "receive_duration_ms") == 0 && m[3].value == 1500.0);
    CHECK(strcmp(m[4].name, "drain_ms") == 0 && m[4].value == 500.0);
    CHECK(strcmp(m[5].name, "cpu_ms") == 0 && m[5].value == 1500.0);
    CHECK(strcmp(m[6].name, "peak_rss_bytes") == 0 && m[6].value == 4096.0);

    /* OTP: planned duration; the drain (here 0.9 ms) in whole milliseconds */
    p.method = METHOD_OTP;
    o.senders_stopped_ns = 2004000000;
    o.last_receive_ns = 2004900000;
    fanin_metrics(&p, &o, m);
    CHECK(m[0].value == 3000000.0);
    CHECK(m[2].value == 1000.0);
    CHECK(m[3].value == 1000.0);
    CHECK(m[1].value == 3000000.0);
    CHECK(m[4].value > 0.89 && m[4].value < 0.91);

    /* the last end marker can be seen before the coordinator's time stamp: drain is 0 */
    p.method = METHOD_MSGBENCH;
    o.last_receive_ns = o.senders_stopped_ns - 1000;
    fanin_metrics(&p, &o, m);
    CHECK(m[4].value == 0.0);

    verify_count v[FANIN_VERIFY_COUNT];
    fanin_verify(&o, v);
    CHECK(strcmp(v[0].name, "sent_message") == 0 && v[0].count == 3000000);
    CHECK(strcmp(v[1].name, "received_message") == 0 && v[1].count == 3000000);
    CHECK(strcmp(v[2].name, "sent_exit_signal") == 0 && v[2].count == 0);
    CHECK(strcmp(v[3].name, "received_exit_signal") == 0 && v[3].count == 0);
    CHECK(strcmp(v[4].name, "receiver_alive") == 0 && v[4].count == 1);
}

static void test_small_run(fanin_payload payload, long long senders, double first_percent, long long first_size,
                           long long second_size)
{
    fanin_params p = params_with(senders, first_size, 8192);
    p.duration_ms = 30;
    if (first_percent < 100.0) {
        p.mix[0].percent = first_percent;
        p.mix[1] = (mix_entry){100.0 - first_percent, SIGNAL_MESSAGE, second_size};
        p.mix_length = 2;
    }
    fanin_outcome o;
    error_kind kind = ERROR_INTERNAL;
    char message[256] = "";
    CHECK(fanin_run(&p, payload, &o, &kind, message, sizeof message));
    CHECK(o.sent[SIGNAL_MESSAGE] > 0);
    CHECK(o.received[SIGNAL_MESSAGE] == o.sent[SIGNAL_MESSAGE]);
    CHECK(o.sent[SIGNAL_EXIT_SIGNAL] == 0 && o.received[SIGNAL_EXIT_SIGNAL] == 0);
    CHECK(o.receiver_alive == 1);
    CHECK(o.senders_stopped_ns - o.start_ns >= 30 * 1000000LL);
    CHECK(o.last_receive_ns >= o.start_ns);
    CHECK(o.cpu_ns > 0 && o.peak_rss_bytes > 0);
}

/* target.toml's max_processes is the thread limit the code enforces. */
static void test_target_toml_agrees(void)
{
    FILE *toml = fopen("target.toml", "r");
    CHECK(toml != NULL);
    if (toml == NULL) {
        return;
    }
    char line[256];
    long long max_processes = -1;
    while (fgets(line, sizeof line, toml) != NULL) {
        if (sscanf(line, "max_processes = %lld", &max_processes) == 1) {
            break;
        }
    }
    fclose(toml);
    CHECK(max_processes == FANIN_MAX_THREADS);
}

void test_fanin(void)
{
    test_params();
    test_queue_capacity();
    test_metrics();
    fanin_payload payloads[] = {PAYLOAD_COPY_TO_SLOT, PAYLOAD_MALLOC};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        test_small_run(payloads[i], 1, 100.0, 1, 0);
        test_small_run(payloads[i], 3, 50.0, 1, 100);
        test_small_run(payloads[i], 32, 100.0, 10, 0);
    }
    test_target_toml_agrees();
}
