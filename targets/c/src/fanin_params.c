#include "fanin_params.h"

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "params.h"

bool fanin_params_read(const json_value *params, fanin_params *out, error_kind *kind, char *message,
                       size_t message_size)
{
    memset(out, 0, sizeof *out);
    *kind = ERROR_INTERNAL;
    param_reader r = param_reader_of(params);
    out->senders = param_integer(&r, "senders");
    out->duration_ms = param_integer(&r, "duration_ms");
    out->memory_limit_mb = param_integer(&r, "memory_limit_mb");
    const json_value *mix = param_array(&r, "mix");
    if (!param_reader_ok(&r, "params.", message, message_size)) {
        return false;
    }
    /* not a range check: the tables below have FANIN_MAX_MIX slots */
    if (mix->as.array.count > FANIN_MAX_MIX) {
        snprintf(message, message_size, "params.mix has %zu entries; the c worker holds %d", mix->as.array.count,
                 FANIN_MAX_MIX);
        return false;
    }
    out->mix_length = mix->as.array.count;
    for (size_t i = 0; i < out->mix_length; i++) {
        param_reader item = param_reader_of(mix->as.array.items[i]);
        out->mix[i].percent = param_number(&item, "percent");
        out->mix[i].size = param_integer(&item, "size");
        const char *signal = param_string(&item, "kind");
        if (!param_reader_ok(&item, "params.mix[].", message, message_size)) {
            return false;
        }
        if (strcmp(signal, "message") != 0) {
            *kind = ERROR_UNSUPPORTED;
            snprintf(message, message_size,
                     "mix[%zu].kind = \"%s\" is not supported: exit signals are an Erlang notion; C threads have "
                     "no equivalent",
                     i, signal);
            return false;
        }
        out->mix[i].kind = SIGNAL_MESSAGE;
    }
    return true;
}

bool fanin_options_read(const json_value *options, fanin_payload *payload, char *message, size_t message_size)
{
    static const char *const known[] = {"payload"};
    static const char *const payloads[] = {"slot", "malloc"}; /* in fanin_payload's order */
    int chosen = options_only(options, known, 1, message, message_size)
                     ? option_choice(options, "payload", payloads, 2, PAYLOAD_COPY_TO_SLOT, message, message_size)
                     : -1;
    *payload = chosen == PAYLOAD_MALLOC ? PAYLOAD_MALLOC : PAYLOAD_COPY_TO_SLOT;
    return chosen >= 0;
}
