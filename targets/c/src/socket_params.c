#include "socket_params.h"

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "params.h"

const char *socket_mode_name(socket_mode mode)
{
    return mode == SOCKET_ECHO ? "echo" : "flow";
}

long long socket_messages(const socket_params *p)
{
    long long n = p->total_bytes / p->size;
    return n > 1 ? n : 1;
}

bool socket_params_read(const json_value *params, socket_params *out, error_kind *kind, char *message,
                        size_t message_size)
{
    param_reader r = param_reader_of(params);
    *out = (socket_params){
        .mode = strcmp(param_string(&r, "mode"), "flow") == 0 ? SOCKET_FLOW : SOCKET_ECHO,
        .size = param_integer(&r, "size"),
        .total_bytes = param_integer(&r, "total_bytes"),
        .sockets = param_integer(&r, "sockets"),
        .remote = strcmp(param_string(&r, "placement"), "remote") == 0,
        .check_content = param_integer(&r, "check_content") == 1,
        .port = param_integer(&r, "port"),
    };
    /* omitted at its default, 0 (omit_at_default): the closed loop's requests are the seed's */
    if (json_object_get(params, "rate") != NULL) {
        out->rate = param_number(&r, "rate");
    }
    const char *data = param_string(&r, "data");
    *kind = ERROR_INTERNAL;
    if (!param_reader_ok(&r, "params.", message, message_size)) {
        return false;
    }
    if (strcmp(data, "binary") != 0) {
        *kind = ERROR_UNSUPPORTED;
        snprintf(message, message_size,
                 "data = \"%s\" is not supported: C sends bytes from a buffer; lists of bytes are an Erlang notion "
                 "(use data = \"binary\")",
                 data);
        return false;
    }
    return true;
}

bool socket_options_read(const json_value *options, bool *pin_option, char *message, size_t message_size)
{
    static const char *const known[] = {"pin"};
    static const char *const pins[] = {"none", "pair"};
    int pin = options_only(options, known, 1, message, message_size)
                  ? option_choice(options, "pin", pins, 2, 0, message, message_size)
                  : -1;
    *pin_option = pin == 1;
    return pin >= 0;
}

bool socket_pins_pairs(const socket_params *p, bool pin_option)
{
    return pin_option && p->mode == SOCKET_ECHO;
}

bool socket_open_loop(const socket_params *p)
{
    return p->rate > 0;
}

bool socket_one_thread(const socket_params *p)
{
    return p->sockets == 1;
}
