#include "params_test.h"

#include <stdio.h>
#include <string.h>

int params_decode_text(params_decoder decode, const char *text, void *out, error_kind *kind, char *message,
                       size_t size)
{
    char error[256];
    json_value *v = json_parse(text, strlen(text), error, sizeof error);
    if (v == NULL) {
        fprintf(stderr, "test JSON does not parse: %s: %s\n", text, error);
        return 0;
    }
    int ok = decode(v, out, kind, message, size);
    json_free(v);
    return ok;
}

int params_rejected(params_decoder decode, const char *text, void *out, error_kind expected_kind,
                    const char *expected)
{
    error_kind kind = ERROR_INTERNAL;
    char message[1024] = "";
    if (params_decode_text(decode, text, out, &kind, message, sizeof message)) {
        fprintf(stderr, "accepted: %s\n", text);
        return 0;
    }
    if (kind != expected_kind || strstr(message, expected) == NULL) {
        fprintf(stderr, "unexpected rejection of %s: %s\n", text, message);
        return 0;
    }
    return 1;
}
