#include "socket_params.h"

#include <string.h>

#include "param_check.h"

/* Ranges from spec/workloads/socket.json. */
#define MAX_SIZE 67108864LL
#define MAX_TOTAL_BYTES 17179869184LL
#define MAX_PORT 65535LL

static const char *const PARAM_NAMES[] = {"mode", "size", "total_bytes", "sockets",
                                          "data", "placement", "check_content", "port"};
#define PARAM_COUNT (sizeof PARAM_NAMES / sizeof PARAM_NAMES[0])

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
    param_complaint c = {kind, message, message_size};
    memset(out, 0, sizeof *out);
    if (!param_check_names(&c, params, "socket", PARAM_NAMES, PARAM_COUNT)) {
        return false;
    }
    int mode = 0;
    int data = 0;
    int placement = 0;
    long long check_content = 0;
    if (!param_choice(&c, params, "mode", "echo", "flow", &mode) ||
        !param_integer(&c, params, "size", 1, MAX_SIZE, "", &out->size) ||
        !param_integer(&c, params, "total_bytes", 1, MAX_TOTAL_BYTES, "", &out->total_bytes) ||
        !param_integer(&c, params, "sockets", 1, SOCKET_MAX_SOCKETS, "", &out->sockets) ||
        !param_choice(&c, params, "data", "binary", "list", &data) ||
        !param_choice(&c, params, "placement", "local", "remote", &placement) ||
        !param_integer(&c, params, "check_content", 0, 1, "", &check_content) ||
        !param_integer(&c, params, "port", 0, MAX_PORT, "", &out->port)) {
        return false;
    }
    out->mode = mode == 0 ? SOCKET_ECHO : SOCKET_FLOW;
    out->remote = placement == 1;
    out->check_content = check_content == 1;
    if (out->size > out->total_bytes) {
        return param_reject(&c, ERROR_BAD_PARAMS,
                            "size = %lld is out of range: size must not exceed total_bytes (%lld), the bytes per "
                            "socket",
                            out->size, out->total_bytes);
    }
    if (data == 1) {
        return param_reject(&c, ERROR_UNSUPPORTED,
                            "data = \"list\" is not supported: C sends bytes from a buffer; lists of bytes are an "
                            "Erlang notion (use data = \"binary\")");
    }
    return true;
}
