#include "protocol.h"

#include <inttypes.h>
#include <string.h>

void json_write_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c != '\0'; c++) {
        switch (*c) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            if (*c < 0x20) {
                fprintf(out, "\\u%04x", *c);
            } else {
                fputc(*c, out); /* UTF-8 passes through unchanged */
            }
        }
    }
    fputc('"', out);
}

static const char *error_kind_name(error_kind kind)
{
    switch (kind) {
    case ERROR_UNSUPPORTED: return "unsupported";
    case ERROR_RESOURCE: return "resource";
    case ERROR_INTERNAL: return "internal";
    }
    return "internal";
}

void protocol_hello(FILE *out, const char *target, const char *runtime_version, const char *variant)
{
    fputs("{\"type\":\"hello\",\"target\":", out);
    json_write_string(out, target);
    fputs(",\"runtime_version\":", out);
    json_write_string(out, runtime_version);
    fputs(",\"variant\":", out);
    json_write_string(out, variant);
    fputs("}\n", out);
    fflush(out);
}

void protocol_error(FILE *out, error_kind kind, const char *message)
{
    fputs("{\"type\":\"error\",\"kind\":", out);
    json_write_string(out, error_kind_name(kind));
    fputs(",\"message\":", out);
    json_write_string(out, message[0] != '\0' ? message : "(no message)");
    fputs("}\n", out);
    fflush(out);
}

void protocol_result(FILE *out, const measured_fact *measured, size_t measured_count,
                     const verify_count *verify, size_t verify_count_length)
{
    protocol_result_with_histograms(out, measured, measured_count, verify, verify_count_length, NULL, 0);
}

void protocol_result_with_histograms(FILE *out, const measured_fact *measured, size_t measured_count,
                                     const verify_count *verify, size_t verify_count_length,
                                     const named_histogram *histograms, size_t histogram_count)
{
    fputs("{\"type\":\"result\",\"measured\":{", out);
    for (size_t i = 0; i < measured_count; i++) {
        const measured_fact *m = &measured[i];
        fputs(i > 0 ? "," : "", out);
        json_write_string(out, m->name);
        if (m->list == NULL) {
            fprintf(out, ":%" PRId64, m->value);
            continue;
        }
        fputs(":[", out);
        for (size_t j = 0; j < m->list_length; j++) {
            fprintf(out, "%s%" PRId64, j > 0 ? "," : "", m->list[j]);
        }
        fputc(']', out);
    }
    fputs("},\"verify\":{", out);
    for (size_t i = 0; i < verify_count_length; i++) {
        fputs(i > 0 ? "," : "", out);
        json_write_string(out, verify[i].name);
        fprintf(out, ":%lld", verify[i].count);
    }
    fputc('}', out);
    if (histogram_count > 0) {
        fputs(",\"histograms\":{", out);
        for (size_t i = 0; i < histogram_count; i++) {
            fputs(i > 0 ? "," : "", out);
            json_write_string(out, histograms[i].name);
            fputc(':', out);
            histogram_write_json(out, histograms[i].counts);
        }
        fputc('}', out);
    }
    fputs("}\n", out);
    fflush(out);
}

error_kind protocol_error_kind(const char *name)
{
    if (strcmp(name, "unsupported") == 0) {
        return ERROR_UNSUPPORTED;
    }
    return strcmp(name, "resource") == 0 ? ERROR_RESOURCE : ERROR_INTERNAL;
}
