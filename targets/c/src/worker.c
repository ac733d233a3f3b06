#define _GNU_SOURCE
#include "worker.h"

#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fanin.h"
#include "fanin_params.h"
#include "json.h"
#include "protocol.h"
#include "socket_client.h"
#include "socket_params.h"

/* Far above any valid request (the largest is a ring payload of 64 KiB, escaped). */
#define MAX_REQUEST_BYTES (4 * 1024 * 1024)
#define MESSAGE_BYTES 1024

#define DEFAULT_VARIANT "default"

/* The variants (target.toml): how a payload reaches the receiver. */
static const struct {
    const char *name;
    fanin_payload payload;
} VARIANTS[] = {
    {DEFAULT_VARIANT, PAYLOAD_COPY_TO_SLOT},
    {"malloc", PAYLOAD_MALLOC},
};

static const char *const REQUEST_FIELDS[] = {"workload", "variant", "params", "repetition"};

char *worker_read_request_line(FILE *in, size_t *length, bool *too_long)
{
    size_t capacity = 4096;
    size_t used = 0;
    char *line = malloc(capacity);
    *too_long = false;
    if (line == NULL) {
        return NULL;
    }
    int c;
    while ((c = fgetc(in)) != EOF && c != '\n') {
        if (used + 1 >= capacity) {
            if (capacity >= MAX_REQUEST_BYTES) {
                *too_long = true;
                free(line);
                return NULL;
            }
            char *grown = realloc(line, capacity * 2);
            if (grown == NULL) {
                free(line);
                return NULL;
            }
            line = grown;
            capacity *= 2;
        }
        line[used++] = (char)c;
    }
    line[used] = '\0';
    *length = used;
    return line;
}

static void errorf(FILE *out, error_kind kind, const char *format, ...) __attribute__((format(printf, 3, 4)));

static void errorf(FILE *out, error_kind kind, const char *format, ...)
{
    char message[MESSAGE_BYTES];
    va_list args;
    va_start(args, format);
    vsnprintf(message, sizeof message, format, args);
    va_end(args);
    protocol_error(out, kind, message);
}

static const char *string_field(const json_value *request, const char *name)
{
    const json_value *v = json_object_get(request, name);
    return v != NULL && v->type == JSON_STRING ? v->as.string.chars : NULL;
}

bool worker_check_request(FILE *out, const json_value *request, const char **workload, const char **variant)
{
    if (request->type != JSON_OBJECT) {
        errorf(out, ERROR_BAD_PARAMS, "the request must be a JSON object, not %s", json_type_name(request->type));
        return false;
    }
    for (size_t i = 0; i < request->as.object.count; i++) {
        const char *key = request->as.object.members[i].key;
        bool known = false;
        for (size_t j = 0; j < sizeof REQUEST_FIELDS / sizeof REQUEST_FIELDS[0]; j++) {
            known = known || strcmp(key, REQUEST_FIELDS[j]) == 0;
        }
        if (!known) {
            errorf(out, ERROR_BAD_PARAMS,
                   "request field %s is not known: a request has workload, variant, params and repetition", key);
            return false;
        }
    }
    *workload = string_field(request, "workload");
    if (*workload == NULL) {
        errorf(out, ERROR_BAD_PARAMS, "request field workload must be a string");
        return false;
    }
    *variant = string_field(request, "variant");
    if (*variant == NULL) {
        errorf(out, ERROR_BAD_PARAMS, "request field variant must be a string");
        return false;
    }
    const json_value *params = json_object_get(request, "params");
    if (params == NULL || params->type != JSON_OBJECT) {
        errorf(out, ERROR_BAD_PARAMS, "request field params must be an object");
        return false;
    }
    long long repetition;
    if (!json_as_integer(json_object_get(request, "repetition"), &repetition) || repetition < 1) {
        errorf(out, ERROR_BAD_PARAMS, "request field repetition must be an integer >= 1");
        return false;
    }
    return true;
}

static void run_fanin(FILE *out, FILE *log, fanin_payload payload, const json_value *params)
{
    fanin_params p;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    if (!fanin_params_decode(params, &p, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
        return;
    }
    fanin_outcome outcome;
    if (!fanin_run(&p, payload, &outcome, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
        return;
    }
    metric metrics[FANIN_METRIC_COUNT];
    verify_count verify[FANIN_VERIFY_COUNT];
    fanin_metrics(&p, &outcome, metrics);
    fanin_verify(&outcome, verify);
    protocol_result(out, metrics, FANIN_METRIC_COUNT, verify, FANIN_VERIFY_COUNT);
    fprintf(log,
            "c fanin: senders=%lld queue capacity=%zu sender parks=%llu receiver sleeps=%llu sender wakes=%llu\n",
            p.senders, outcome.queue_capacity, (unsigned long long)outcome.queue_stats.sender_parks,
            (unsigned long long)outcome.queue_stats.receiver_sleeps,
            (unsigned long long)outcome.queue_stats.sender_wakes);
}

static void run_socket(FILE *out, FILE *log, const json_value *params, const char *line, size_t length)
{
    socket_params p;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    if (!socket_params_decode(params, &p, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
        return;
    }
    socket_outcome outcome;
    if (!socket_run(&p, line, length, &outcome, &kind, message, sizeof message, log)) {
        protocol_error(out, kind, message);
        return;
    }
    metric metrics[SOCKET_METRIC_COUNT];
    verify_count verify[SOCKET_VERIFY_COUNT];
    socket_metrics(&outcome, metrics);
    socket_verify(&outcome, verify);
    protocol_result(out, metrics, SOCKET_METRIC_COUNT, verify, SOCKET_VERIFY_COUNT);
}

static void dispatch(FILE *out, FILE *log, const json_value *request, const char *line, size_t length,
                     const char *workload, const char *variant)
{
    bool fanin = strcmp(workload, "fanin") == 0;
    if (!fanin && strcmp(workload, "socket") != 0) {
        char quoted[160];
        json_format(json_object_get(request, "workload"), quoted, sizeof quoted);
        errorf(out, ERROR_UNSUPPORTED,
               "workload %s is not supported: the c target implements fanin (N OS threads sending to one "
               "consumer thread: the machine's ceiling) and socket (plain blocking TCP sockets)",
               quoted);
        return;
    }
    for (size_t i = 0; i < sizeof VARIANTS / sizeof VARIANTS[0]; i++) {
        if (strcmp(variant, VARIANTS[i].name) != 0) {
            continue;
        }
        if (fanin) {
            run_fanin(out, log, VARIANTS[i].payload, json_object_get(request, "params"));
        } else if (VARIANTS[i].payload != PAYLOAD_COPY_TO_SLOT) {
            errorf(out, ERROR_UNSUPPORTED,
                   "variant \"%s\" does not implement socket: it differs from \"default\" only in how fanin "
                   "hands a payload between threads; socket runs in variant \"default\"",
                   variant);
        } else {
            run_socket(out, log, json_object_get(request, "params"), line, length);
        }
        return;
    }
    char quoted[160];
    json_format(json_object_get(request, "variant"), quoted, sizeof quoted);
    errorf(out, ERROR_UNSUPPORTED, "variant %s is not supported: the c target has the variants \"%s\" and \"%s\"",
           quoted, VARIANTS[0].name, VARIANTS[1].name);
}

int worker_main(FILE *in, FILE *out, FILE *log)
{
    char runtime_version[128];
    snprintf(runtime_version, sizeof runtime_version, "C11 pthreads, gcc %s, glibc %s", __VERSION__,
             gnu_get_libc_version());

    size_t length = 0;
    bool too_long = false;
    char *line = worker_read_request_line(in, &length, &too_long);
    char parse_error[256] = "";
    json_value *request = NULL;
    if (line != NULL) {
        request = json_parse(line, length, parse_error, sizeof parse_error);
    }
    /* hello comes first whatever the request holds: echo its variant when it has one */
    const char *requested = request != NULL ? string_field(request, "variant") : NULL;
    protocol_hello(out, WORKER_TARGET, runtime_version,
                   requested != NULL && requested[0] != '\0' ? requested : DEFAULT_VARIANT);

    if (line == NULL) {
        if (too_long) {
            errorf(out, ERROR_BAD_PARAMS, "the request line is longer than %d bytes", MAX_REQUEST_BYTES);
        } else {
            errorf(out, ERROR_INTERNAL, "out of memory reading the request");
        }
    } else if (request == NULL) {
        errorf(out, ERROR_BAD_PARAMS, "the request is not valid JSON: %s", parse_error);
    } else {
        const char *workload = NULL;
        const char *variant = NULL;
        if (worker_check_request(out, request, &workload, &variant)) {
            dispatch(out, log, request, line, length, workload, variant);
        }
    }
    json_free(request);
    free(line);
    fflush(out);
    return 0;
}
