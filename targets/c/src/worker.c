#define _GNU_SOURCE
#include "worker.h"

#include <gnu/libc-version.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fanin.h"
#include "fanin_params.h"
#include "json.h"
#include "params.h"
#include "protocol.h"
#include "socket_client.h"
#include "socket_params.h"

/* Far above any request (the largest is a ring payload of 64 KiB, escaped). */
#define MAX_REQUEST_BYTES (4 * 1024 * 1024)
#define MESSAGE_BYTES 1024

/* Reads up to the first newline (or end of input); NULL if the line exceeds
 * MAX_REQUEST_BYTES or memory runs out. */
static char *read_line(FILE *in, size_t *length)
{
    size_t capacity = 4096;
    size_t used = 0;
    char *line = malloc(capacity);
    if (line == NULL) {
        return NULL;
    }
    int c;
    while ((c = fgetc(in)) != EOF && c != '\n') {
        if (used + 1 >= capacity) {
            char *grown = capacity < MAX_REQUEST_BYTES ? realloc(line, capacity * 2) : NULL;
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

bool request_read(FILE *in, worker_request *r, char *message, size_t message_size)
{
    memset(r, 0, sizeof *r);
    r->line = read_line(in, &r->length);
    if (r->line == NULL) {
        snprintf(message, message_size, "the request line is longer than %d bytes or memory ran out",
                 MAX_REQUEST_BYTES);
        return false;
    }
    char parse_error[256] = "";
    r->json = json_parse(r->line, r->length, parse_error, sizeof parse_error);
    if (r->json == NULL) {
        snprintf(message, message_size, "the request is not valid JSON: %s", parse_error);
        return false;
    }
    param_reader reader = param_reader_of(r->json);
    r->variant = param_string(&reader, "variant");
    r->workload = param_string(&reader, "workload");
    const json_value *params = json_object_get(r->json, "params");
    const json_value *options = json_object_get(r->json, "options");
    const json_value *warmup = json_object_get(r->json, "warmup");
    r->params = params != NULL && params->type == JSON_OBJECT ? params : NULL;
    r->options = options != NULL && options->type == JSON_OBJECT ? options : NULL;
    r->warmup = warmup != NULL && warmup->type == JSON_BOOL && warmup->as.boolean;
    if (!param_reader_ok(&reader, "request field ", message, message_size)) {
        return false;
    }
    if (r->params == NULL || r->options == NULL) {
        snprintf(message, message_size, "the request has no %s object (spec/README.md, \"The worker protocol\")",
                 r->params == NULL ? "params" : "options");
        return false;
    }
    return true;
}

void request_free(worker_request *r)
{
    json_free(r->json);
    free(r->line);
    memset(r, 0, sizeof *r);
}

bool worker_options_read(const worker_request *r, worker_options *out, char *message, size_t message_size)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < r->options->as.object.count; i++) {
        const json_member *option = &r->options->as.object.members[i];
        const char *value = option->value->type == JSON_STRING ? option->value->as.string.chars : "";
        if (strcmp(option->key, "pin") == 0) {
            out->pin_pairs = strcmp(value, "pair") == 0;
            if (!out->pin_pairs && strcmp(value, "none") != 0) {
                snprintf(message, message_size, "option pin must be \"none\" or \"pair\" (target.toml)");
                return false;
            }
            continue;
        }
        if (strcmp(option->key, "payload") != 0) {
            snprintf(message, message_size, "unknown option %s: the c worker knows payload and pin", option->key);
            return false;
        }
        out->has_payload = strcmp(value, "slot") == 0 || strcmp(value, "malloc") == 0;
        out->payload = strcmp(value, "malloc") == 0 ? PAYLOAD_MALLOC : PAYLOAD_COPY_TO_SLOT;
        if (!out->has_payload) {
            snprintf(message, message_size, "option payload must be \"slot\" or \"malloc\" (target.toml)");
            return false;
        }
    }
    return true;
}

static void run_fanin(FILE *out, FILE *log, const worker_request *r, const worker_options *options)
{
    fanin_params p;
    fanin_outcome outcome;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    if (!options->has_payload) {
        protocol_error(out, ERROR_INTERNAL, "fanin needs option payload (\"slot\" or \"malloc\", target.toml)");
        return;
    }
    if (!fanin_params_read(r->params, &p, &kind, message, sizeof message) ||
        !fanin_run(&p, options->payload, &outcome, &kind, message, sizeof message)) {
        protocol_error(out, kind, message);
        return;
    }
    measured_fact measured[FANIN_MEASURED_COUNT];
    verify_count verify[FANIN_VERIFY_COUNT];
    fanin_measured(&outcome, measured);
    fanin_verify(&outcome, verify);
    protocol_result(out, measured, FANIN_MEASURED_COUNT, verify, FANIN_VERIFY_COUNT);
    fprintf(log,
            "c fanin%s: senders=%lld queue capacity=%zu sender parks=%llu receiver sleeps=%llu sender wakes=%llu\n",
            r->warmup ? " (warm-up)" : "", p.senders, outcome.queue_capacity,
            (unsigned long long)outcome.queue_stats.sender_parks,
            (unsigned long long)outcome.queue_stats.receiver_sleeps,
            (unsigned long long)outcome.queue_stats.sender_wakes);
}

static void run_socket(FILE *out, FILE *log, const worker_request *r, const worker_options *options)
{
    socket_params p;
    socket_outcome outcome;
    error_kind kind = ERROR_INTERNAL;
    char message[MESSAGE_BYTES];
    bool readable = socket_params_read(r->params, &p, &kind, message, sizeof message);
    p.pin_pairs = socket_pins_pairs(&p, options->pin_pairs);
    if (!readable ||
        !socket_run(&p, r->line, r->length, &outcome, &kind, message, sizeof message, log)) {
        protocol_error(out, kind, message);
        return;
    }
    measured_fact measured[SOCKET_MEASURED_COUNT];
    verify_count verify[SOCKET_VERIFY_COUNT];
    socket_measured(&outcome, measured);
    socket_verify(&outcome, verify);
    protocol_result(out, measured, SOCKET_MEASURED_COUNT, verify, SOCKET_VERIFY_COUNT);
    socket_outcome_free(&outcome);
}

int worker_main(FILE *in, FILE *out, FILE *log)
{
    char runtime_version[128];
    snprintf(runtime_version, sizeof runtime_version, "C11 pthreads, gcc %s, glibc %s", __VERSION__,
             gnu_get_libc_version());
    worker_request r;
    worker_options options;
    char message[MESSAGE_BYTES];
    bool readable = request_read(in, &r, message, sizeof message);
    /* hello comes first whatever the request holds: echo its variant when it has one */
    protocol_hello(out, WORKER_TARGET, runtime_version,
                   r.variant != NULL && r.variant[0] != '\0' ? r.variant : "unknown");
    if (!readable || !worker_options_read(&r, &options, message, sizeof message)) {
        protocol_error(out, ERROR_INTERNAL, message);
    } else if (strcmp(r.workload, "fanin") == 0) {
        run_fanin(out, log, &r, &options);
    } else if (strcmp(r.workload, "socket") == 0) {
        run_socket(out, log, &r, &options);
    } else {
        snprintf(message, sizeof message,
                 "workload \"%s\" is not supported: the c target implements fanin (N OS threads sending to one "
                 "consumer thread: the machine's ceiling) and socket (plain blocking TCP sockets)",
                 r.workload);
        protocol_error(out, ERROR_UNSUPPORTED, message);
    }
    request_free(&r);
    fflush(out);
    return 0;
}
