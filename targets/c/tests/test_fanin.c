#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "fanin.h"
#include "fanin_params.h"
#include "json.h"

/* Reads params given as JSON text; returns 1 on success, else stores kind/message. */
static int read_text(const char *text, fanin_params *p, error_kind *kind, char *message, size_t size)
{
    char error[256];
    json_value *v = json_parse(text, strlen(text), error, sizeof error);
    int ok = v != NULL && fanin_params_read(v, p, kind, message, size);
    json_free(v);
    return ok;
}

#define MIX_OF(kind) "[{\"percent\": 50, \"kind\": \"message\", \"size\": 1}, {\"percent\": 50.0, \"kind\": \"" kind "\", \"size\": 100}]"
#define PARAMS(mix) \
    "{\"senders\": 4, \"duration_ms\": 1000, \"mix\": " mix ", \"method\": \"otp\", \"memory_limit_mb\": 8192}"

/* Typed access only: the values as given; what C does not implement; a params object
 * that is not the harness's. */
static void test_params_read(void)
{
    fanin_params p;
    error_kind kind = ERROR_RESOURCE;
    char message[1024] = "";
    CHECK(read_text(PARAMS(MIX_OF("message")), &p, &kind, message, sizeof message));
    CHECK(p.senders == 4 && p.duration_ms == 1000 && p.mix_length == 2 && p.memory_limit_mb == 8192);
    CHECK(p.mix[1].size == 100 && p.mix[1].kind == SIGNAL_MESSAGE && p.mix[0].percent == 50.0);

    CHECK(!read_text(PARAMS(MIX_OF("exit_signal")), &p, &kind, message, sizeof message));
    CHECK(kind == ERROR_UNSUPPORTED && strstr(message, "mix[1].kind = \"exit_signal\" is not supported") != NULL);
    CHECK(!read_text("{\"senders\": 4, \"mix\": []}", &p, &kind, message, sizeof message));
    CHECK(kind == ERROR_INTERNAL && strstr(message, "params.duration_ms is absent or not an integer") != NULL);
    CHECK(!read_text(PARAMS("[{\"percent\": 100, \"kind\": \"message\", \"size\": \"big\"}]"), &p, &kind, message,
                     sizeof message));
    CHECK(kind == ERROR_INTERNAL && strstr(message, "params.mix[].size is absent or not an integer") != NULL);
#define ENTRY "{\"percent\": 10, \"kind\": \"message\", \"size\": 1}"
    CHECK(!read_text(PARAMS("[" ENTRY "," ENTRY "," ENTRY "," ENTRY "," ENTRY "," ENTRY "," ENTRY "," ENTRY "," ENTRY "]"),
                     &p, &kind, message, sizeof message));
#undef ENTRY
    CHECK(kind == ERROR_INTERNAL && strstr(message, "the c worker holds 8") != NULL);
}

static fanin_params params_with(long long senders, long long size, long long memory_limit_mb)
{
    fanin_params p = {.senders = senders, .duration_ms = 20, .mix_length = 1, .memory_limit_mb = memory_limit_mb};
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

static void test_measured(void)
{
    fanin_outcome o = {.sent = {3000000, 0}, .received = {3000000, 0}, .receiver_alive = 1,
                       .start_ns = 1000000000, .senders_stopped_ns = 2000000000,
                       .last_receive_ns = 2500000000, .cpu_ns = 1500000000, .peak_rss_bytes = 4096};
    measured_fact m[FANIN_MEASURED_COUNT];
    fanin_measured(&o, m);
    CHECK(strcmp(m[0].name, "send_ns") == 0 && m[0].value == 1000000000 && m[0].list == NULL);
    CHECK(strcmp(m[1].name, "receive_ns") == 0 && m[1].value == 1500000000);
    CHECK(strcmp(m[2].name, "drain_ns") == 0 && m[2].value == 500000000);
    CHECK(strcmp(m[3].name, "cpu_ns") == 0 && m[3].value == 1500000000);
    CHECK(strcmp(m[4].name, "peak_rss_bytes") == 0 && m[4].value == 4096);

    /* the last end marker can be seen before the coordinator's time stamp: drain is 0 */
    o.last_receive_ns = o.senders_stopped_ns - 1000;
    fanin_measured(&o, m);
    CHECK(m[2].value == 0);

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

/* The payload option: slot when unset, malloc when asked, anything else refused. */
static void test_options_read(void)
{
    const char *texts[] = {"{}", "{\"payload\": \"slot\"}", "{\"payload\": \"malloc\"}", "{\"payload\": 1}"};
    const int expected[] = {PAYLOAD_COPY_TO_SLOT, PAYLOAD_COPY_TO_SLOT, PAYLOAD_MALLOC, -1};
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        char message[256] = "";
        fanin_payload payload = PAYLOAD_MALLOC + 1;
        json_value *v = json_parse(texts[i], strlen(texts[i]), message, sizeof message);
        bool ok = v != NULL && fanin_options_read(v, &payload, message, sizeof message);
        CHECK(ok ? (int)payload == expected[i] : expected[i] == -1 && strstr(message, "option payload = 1") != NULL);
        json_free(v);
    }
}

void test_fanin(void)
{
    test_params_read();
    test_options_read();
    test_queue_capacity();
    test_measured();
    fanin_payload payloads[] = {PAYLOAD_COPY_TO_SLOT, PAYLOAD_MALLOC};
    for (size_t i = 0; i < sizeof payloads / sizeof payloads[0]; i++) {
        test_small_run(payloads[i], 1, 100.0, 1, 0);
        test_small_run(payloads[i], 3, 50.0, 1, 100);
        test_small_run(payloads[i], 32, 100.0, 10, 0);
    }
}
