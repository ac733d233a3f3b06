#include "request.h"

#include <stdlib.h>
#include <string.h>

#include "params.h"

/* Far above any request (the largest is a ring payload of 64 KiB, escaped). */
#define MAX_REQUEST_BYTES (4 * 1024 * 1024)

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
