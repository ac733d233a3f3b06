#include "fanin_params.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "param_check.h"

/* Ranges from spec/workloads/fanin.json. */
enum {
    SPEC_MAX_SENDERS = 100000,
    MIN_DURATION_MS = 1,
    MAX_DURATION_MS = 3600000,
    MIN_SIZE = 1,
    MAX_SIZE = 1000000,
    MIN_MEMORY_LIMIT_MB = 64,
    MAX_MEMORY_LIMIT_MB = 1048576,
};

#define PERCENT_TOTAL 100.0
/* Percents are decimal fractions (33.3 + 33.3 + 33.4); allow for binary rounding. */
#define PERCENT_TOLERANCE 1e-6

static const char *const PARAM_NAMES[] = {"senders", "duration_ms", "mix", "method",
                                          "memory_limit_mb"};
#define PARAM_COUNT (sizeof PARAM_NAMES / sizeof PARAM_NAMES[0])

const char *signal_kind_name(signal_kind kind)
{
    switch (kind) {
    case SIGNAL_MESSAGE: return "message";
    case SIGNAL_EXIT_SIGNAL: return "exit_signal";
    case SIGNAL_KIND_COUNT: break;
    }
    return "unknown";
}

static bool decode_mix_entry(param_complaint *c, const json_value *item, size_t index, mix_entry *out)
{
    char given[96];
    json_format(item, given, sizeof given);
    if (item->type != JSON_OBJECT) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu] = %s is not valid: each mix item must be an object {percent, kind, size}",
                            index, given);
    }
    for (size_t i = 0; i < item->as.object.count; i++) {
        const char *key = item->as.object.members[i].key;
        if (strcmp(key, "percent") != 0 && strcmp(key, "kind") != 0 && strcmp(key, "size") != 0) {
            return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].%s is not a known field: mix items have exactly percent, kind and size",
                                index, key);
        }
    }

    const json_value *percent = json_object_get(item, "percent");
    if (percent == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].percent is missing: it must be a number > 0 and <= 100", index);
    }
    json_format(percent, given, sizeof given);
    if (percent->type != JSON_NUMBER || !(percent->as.number.value > 0.0) ||
        percent->as.number.value > PERCENT_TOTAL) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].percent = %s is out of range: it must be a number > 0 and <= 100",
                            index, given);
    }
    out->percent = percent->as.number.value;

    const json_value *kind = json_object_get(item, "kind");
    if (kind == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].kind is missing: it must be \"message\" or \"exit_signal\"", index);
    }
    json_format(kind, given, sizeof given);
    if (kind->type == JSON_STRING && strcmp(kind->as.string.chars, "message") == 0) {
        out->kind = SIGNAL_MESSAGE;
    } else if (kind->type == JSON_STRING && strcmp(kind->as.string.chars, "exit_signal") == 0) {
        out->kind = SIGNAL_EXIT_SIGNAL;
    } else {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].kind = %s is not valid: it must be \"message\" or \"exit_signal\"",
                            index, given);
    }

    const json_value *size = json_object_get(item, "size");
    if (size == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].size is missing: it must be an integer between %d and %d",
                            index, MIN_SIZE, MAX_SIZE);
    }
    json_format(size, given, sizeof given);
    if (!json_as_integer(size, &out->size) || out->size < MIN_SIZE || out->size > MAX_SIZE) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix[%zu].size = %s is out of range: it must be an integer between %d and %d",
                            index, given, MIN_SIZE, MAX_SIZE);
    }
    return true;
}

static bool decode_mix(param_complaint *c, const json_value *params, fanin_params *out)
{
    const json_value *mix = json_object_get(params, "mix");
    if (mix == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix is missing: mix must be an array of 1 to %d {percent, kind, size} objects",
                            FANIN_MAX_MIX);
    }
    char given[96];
    json_format(mix, given, sizeof given);
    if (mix->type != JSON_ARRAY || mix->as.array.count < 1 || mix->as.array.count > FANIN_MAX_MIX) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix = %s is not valid: mix must be an array of 1 to %d {percent, kind, size} objects",
                            given, FANIN_MAX_MIX);
    }
    double total = 0.0;
    for (size_t i = 0; i < mix->as.array.count; i++) {
        if (!decode_mix_entry(c, mix->as.array.items[i], i, &out->mix[i])) {
            return false;
        }
        total += out->mix[i].percent;
    }
    out->mix_length = mix->as.array.count;
    if (fabs(total - PERCENT_TOTAL) > PERCENT_TOLERANCE) {
        return param_reject(c, ERROR_BAD_PARAMS, "mix = %s is not valid: its percents add to %g, they must add to 100",
                            given, total);
    }
    return true;
}

bool fanin_params_decode(const json_value *params, fanin_params *out, error_kind *kind,
                         char *message, size_t message_size)
{
    param_complaint c = {kind, message, message_size};
    memset(out, 0, sizeof *out);
    if (!param_check_names(&c, params, "fanin", PARAM_NAMES, PARAM_COUNT)) {
        return false;
    }

    long long max_senders = FANIN_MAX_THREADS - 1 < SPEC_MAX_SENDERS ? FANIN_MAX_THREADS - 1 : SPEC_MAX_SENDERS;
    int method = 0;
    char why[128];
    snprintf(why, sizeof why, " (the c target runs one OS thread per sender, plus the receiver: max_processes = %d)",
             FANIN_MAX_THREADS);
    if (!param_integer(&c, params, "senders", 1, max_senders, why, &out->senders) ||
        !param_integer(&c, params, "duration_ms", MIN_DURATION_MS, MAX_DURATION_MS, "", &out->duration_ms) ||
        !decode_mix(&c, params, out) || !param_choice(&c, params, "method", "msgbench", "otp", &method) ||
        !param_integer(&c, params, "memory_limit_mb", MIN_MEMORY_LIMIT_MB, MAX_MEMORY_LIMIT_MB, "",
                       &out->memory_limit_mb)) {
        return false;
    }
    out->method = method == 0 ? METHOD_MSGBENCH : METHOD_OTP;

    for (size_t i = 0; i < out->mix_length; i++) {
        if (out->mix[i].kind == SIGNAL_EXIT_SIGNAL) {
            return param_reject(&c, ERROR_UNSUPPORTED,
                                "mix[%zu].kind = \"exit_signal\" is not supported: exit signals are an Erlang notion; C threads have no equivalent",
                                i);
        }
    }
    return true;
}
