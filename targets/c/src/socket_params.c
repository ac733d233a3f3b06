#include "socket_params.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Ranges from spec/workloads/socket.json. */
#define MAX_SIZE 67108864LL
#define MAX_TOTAL_BYTES 17179869184LL
#define MAX_PORT 65535LL

static const char *const PARAM_NAMES[] = {"mode", "size", "total_bytes", "sockets",
                                          "data", "placement", "check_content", "port"};
#define PARAM_COUNT (sizeof PARAM_NAMES / sizeof PARAM_NAMES[0])

typedef struct {
    error_kind *kind;
    char *message;
    size_t message_size;
} complaint;

static bool reject(complaint *c, error_kind kind, const char *format, ...) __attribute__((format(printf, 3, 4)));

static bool reject(complaint *c, error_kind kind, const char *format, ...)
{
    *c->kind = kind;
    va_list args;
    va_start(args, format);
    vsnprintf(c->message, c->message_size, format, args);
    va_end(args);
    return false;
}

static bool decode_integer(complaint *c, const json_value *params, const char *name, long long min, long long max,
                           long long *out)
{
    const json_value *v = json_object_get(params, name);
    if (v == NULL) {
        return reject(c, ERROR_BAD_PARAMS, "%s is missing: %s must be an integer between %lld and %lld", name,
                      name, min, max);
    }
    char given[96];
    json_format(v, given, sizeof given);
    if (!json_as_integer(v, out) || *out < min || *out > max) {
        return reject(c, ERROR_BAD_PARAMS, "%s = %s is out of range: %s must be an integer between %lld and %lld",
                      name, given, name, min, max);
    }
    return true;
}

/* One of two strings: *out = 0 for first, 1 for second. */
static bool decode_choice(complaint *c, const json_value *params, const char *name, const char *first,
                          const char *second, int *out)
{
    const json_value *v = json_object_get(params, name);
    if (v == NULL) {
        return reject(c, ERROR_BAD_PARAMS, "%s is missing: %s must be \"%s\" or \"%s\"", name, name, first, second);
    }
    if (v->type == JSON_STRING && strcmp(v->as.string.chars, first) == 0) {
        *out = 0;
        return true;
    }
    if (v->type == JSON_STRING && strcmp(v->as.string.chars, second) == 0) {
        *out = 1;
        return true;
    }
    char given[96];
    json_format(v, given, sizeof given);
    return reject(c, ERROR_BAD_PARAMS, "%s = %s is not valid: %s must be \"%s\" or \"%s\"", name, given, name, first,
                  second);
}

const char *socket_mode_name(socket_mode mode)
{
    return mode == SOCKET_ECHO ? "echo" : "flow";
}

long long socket_messages(const socket_params *p)
{
    long long n = p->total_bytes / p->size;
    return n > 1 ? n : 1;
}

bool socket_params_decode(const json_value *params, socket_params *out, error_kind *kind, char *message,
                          size_t message_size)
{
    complaint c = {kind, message, message_size};
    memset(out, 0, sizeof *out);
    if (params == NULL || params->type != JSON_OBJECT) {
        return reject(&c, ERROR_BAD_PARAMS, "params must be an object");
    }
    for (size_t i = 0; i < params->as.object.count; i++) {
        const char *name = params->as.object.members[i].key;
        bool known = false;
        for (size_t j = 0; j < PARAM_COUNT; j++) {
            known = known || strcmp(name, PARAM_NAMES[j]) == 0;
        }
        if (!known) {
            return reject(&c, ERROR_BAD_PARAMS,
                          "%s is not a parameter of socket: its parameters are mode, size, total_bytes, sockets, "
                          "data, placement, check_content and port",
                          name);
        }
    }
    int mode = 0;
    int data = 0;
    int placement = 0;
    long long check_content = 0;
    if (!decode_choice(&c, params, "mode", "echo", "flow", &mode) ||
        !decode_integer(&c, params, "size", 1, MAX_SIZE, &out->size) ||
        !decode_integer(&c, params, "total_bytes", 1, MAX_TOTAL_BYTES, &out->total_bytes) ||
        !decode_integer(&c, params, "sockets", 1, SOCKET_MAX_SOCKETS, &out->sockets) ||
        !decode_choice(&c, params, "data", "binary", "list", &data) ||
        !decode_choice(&c, params, "placement", "local", "remote", &placement) ||
        !decode_integer(&c, params, "check_content", 0, 1, &check_content) ||
        !decode_integer(&c, params, "port", 0, MAX_PORT, &out->port)) {
        return false;
    }
    out->mode = mode == 0 ? SOCKET_ECHO : SOCKET_FLOW;
    out->remote = placement == 1;
    out->check_content = check_content == 1;
    if (out->size > out->total_bytes) {
        return reject(&c, ERROR_BAD_PARAMS,
                      "size = %lld is out of range: size must not exceed total_bytes (%lld), the bytes per socket",
                      out->size, out->total_bytes);
    }
    if (data == 1) {
        return reject(&c, ERROR_UNSUPPORTED,
                      "data = \"list\" is not supported: C sends bytes from a buffer; lists of bytes are an Erlang "
                      "notion (use data = \"binary\")");
    }
    return true;
}
