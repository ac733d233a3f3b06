/* A small JSON reader (RFC 8259) for the request a worker receives (and the server
 * half's lines). The harness writes it, so the reader decodes valid JSON exactly and
 * refuses malformed JSON, without linting what the harness never sends.
 *
 * It builds a tree of values. Strings are decoded (escapes, \u surrogate pairs) to
 * UTF-8 and NUL-terminated; raw bytes pass through. Objects keep their members in input
 * order (a repeated key: the first wins). Nesting is limited to JSON_MAX_DEPTH levels so
 * no input can exhaust the stack.
 */
#ifndef MSGBENCH_JSON_H
#define MSGBENCH_JSON_H

#include <stdbool.h>
#include <stddef.h>

#define JSON_MAX_DEPTH 64

typedef enum {
    JSON_NULL,
    JSON_BOOL,
    JSON_NUMBER,
    JSON_STRING,
    JSON_ARRAY,
    JSON_OBJECT
} json_type;

typedef struct json_value json_value;

typedef struct {
    char *key; /* decoded, NUL-terminated */
    size_t key_length;
    json_value *value;
} json_member;

struct json_value {
    json_type type;
    union {
        bool boolean;
        struct {
            double value;
            /* true when the literal has no fraction or exponent and fits in long long */
            bool is_integer;
            long long integer;
        } number;
        struct {
            char *chars; /* decoded UTF-8, NUL-terminated (may also hold \u0000) */
            size_t length;
        } string;
        struct {
            json_value **items;
            size_t count;
        } array;
        struct {
            json_member *members;
            size_t count;
        } object;
    } as;
};

/* Parses exactly one JSON value (surrounded by optional whitespace) from text[0..length).
 * Returns NULL on error and writes a message with the byte offset into error. */
json_value *json_parse(const char *text, size_t length, char *error, size_t error_size);

void json_free(json_value *value);

/* The member of an object with this key, or NULL (also when value is not an object). */
const json_value *json_object_get(const json_value *object, const char *key);

/* True when value is a number with an integral value that fits in long long
 * (1 and 1.0 and 1e3 all count, as in JSON Schema); stores it in *out. */
bool json_as_integer(const json_value *value, long long *out);

#endif
