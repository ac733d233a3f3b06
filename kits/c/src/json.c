#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *text;
    size_t length;
    size_t pos;
    int depth;
    char *error;
    size_t error_size;
    bool failed;
} parser;

/* A growable byte buffer for decoding strings. */
typedef struct {
    char *bytes;
    size_t length;
    size_t capacity;
} byte_buffer;

static void fail(parser *p, const char *format, ...) __attribute__((format(printf, 2, 3)));

static void fail(parser *p, const char *format, ...)
{
    if (p->failed) {
        return; /* keep the first, most precise message */
    }
    p->failed = true;
    if (p->error == NULL || p->error_size == 0) {
        return;
    }
    char what[160];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    snprintf(p->error, p->error_size, "invalid JSON at byte %zu: %s", p->pos, what);
}

static bool at_end(const parser *p) { return p->pos >= p->length; }

static char peek(const parser *p) { return at_end(p) ? '\0' : p->text[p->pos]; }

static void skip_whitespace(parser *p)
{
    while (!at_end(p)) {
        char c = p->text[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return;
        }
        p->pos++;
    }
}

static bool buffer_push(byte_buffer *b, const char *bytes, size_t count)
{
    if (b->length + count + 1 > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 16;
        while (b->length + count + 1 > capacity) {
            capacity *= 2;
        }
        char *grown = realloc(b->bytes, capacity);
        if (grown == NULL) {
            return false;
        }
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->length, bytes, count);
    b->length += count;
    b->bytes[b->length] = '\0';
    return true;
}

static json_value *new_value(parser *p, json_type type)
{
    json_value *v = calloc(1, sizeof *v);
    if (v == NULL) {
        fail(p, "out of memory");
        return NULL;
    }
    v->type = type;
    return v;
}

static json_value *parse_value(parser *p);

static bool expect_literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->length - p->pos < n || memcmp(p->text + p->pos, word, n) != 0) {
        fail(p, "expected '%s'", word);
        return false;
    }
    p->pos += n;
    return true;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Reads the four hex digits after "\u"; p->pos is on the first digit. */
static bool read_hex4(parser *p, uint32_t *out)
{
    if (p->length - p->pos < 4) {
        fail(p, "truncated \\u escape");
        return false;
    }
    uint32_t unit = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_digit(p->text[p->pos + (size_t)i]);
        if (d < 0) {
            fail(p, "bad hex digit in \\u escape");
            return false;
        }
        unit = unit * 16 + (uint32_t)d;
    }
    p->pos += 4;
    *out = unit;
    return true;
}

static size_t encode_utf8(uint32_t code_point, char out[4])
{
    if (code_point < 0x80) {
        out[0] = (char)code_point;
        return 1;
    }
    if (code_point < 0x800) {
        out[0] = (char)(0xC0 | (code_point >> 6));
        out[1] = (char)(0x80 | (code_point & 0x3F));
        return 2;
    }
    if (code_point < 0x10000) {
        out[0] = (char)(0xE0 | (code_point >> 12));
        out[1] = (char)(0x80 | ((code_point >> 6) & 0x3F));
        out[2] = (char)(0x80 | (code_point & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | (code_point >> 18));
    out[1] = (char)(0x80 | ((code_point >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((code_point >> 6) & 0x3F));
    out[3] = (char)(0x80 | (code_point & 0x3F));
    return 4;
}

/* Decodes "\uXXXX" (p->pos just after the 'u'), joining a surrogate pair. */
static bool decode_unicode_escape(parser *p, byte_buffer *out)
{
    uint32_t unit;
    if (!read_hex4(p, &unit)) {
        return false;
    }
    uint32_t code_point = unit;
    if (unit >= 0xD800 && unit <= 0xDBFF) {
        if (p->length - p->pos < 2 || p->text[p->pos] != '\\' || p->text[p->pos + 1] != 'u') {
            fail(p, "high surrogate not followed by a low surrogate");
            return false;
        }
        p->pos += 2;
        uint32_t low;
        if (!read_hex4(p, &low)) {
            return false;
        }
        if (low < 0xDC00 || low > 0xDFFF) {
            fail(p, "high surrogate not followed by a low surrogate");
            return false;
        }
        code_point = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
    } else if (unit >= 0xDC00 && unit <= 0xDFFF) {
        fail(p, "lone low surrogate");
        return false;
    }
    char utf8[4];
    size_t utf8_length = encode_utf8(code_point, utf8);
    if (!buffer_push(out, utf8, utf8_length)) {
        fail(p, "out of memory");
        return false;
    }
    return true;
}

/* Parses a string literal (p->pos on the opening quote) into a fresh NUL-terminated buffer. */
static bool parse_string_chars(parser *p, char **chars, size_t *length)
{
    byte_buffer out = {0};
    p->pos++; /* opening quote */
    if (!buffer_push(&out, "", 0)) {
        fail(p, "out of memory");
        return false;
    }
    for (;;) {
        if (at_end(p)) {
            fail(p, "unterminated string");
            break;
        }
        unsigned char c = (unsigned char)p->text[p->pos];
        if (c == '"') {
            p->pos++;
            *chars = out.bytes;
            *length = out.length;
            return true;
        }
        if (c < 0x20) {
            fail(p, "control character in string");
            break;
        }
        if (c == '\\') {
            p->pos++;
            char escape = peek(p);
            p->pos++;
            const char *plain = NULL;
            switch (escape) {
            case '"': plain = "\""; break;
            case '\\': plain = "\\"; break;
            case '/': plain = "/"; break;
            case 'b': plain = "\b"; break;
            case 'f': plain = "\f"; break;
            case 'n': plain = "\n"; break;
            case 'r': plain = "\r"; break;
            case 't': plain = "\t"; break;
            case 'u':
                if (!decode_unicode_escape(p, &out)) {
                    goto error;
                }
                continue;
            default:
                p->pos--;
                fail(p, "bad escape in string");
                goto error;
            }
            if (!buffer_push(&out, plain, 1)) {
                fail(p, "out of memory");
                break;
            }
            continue;
        }
        /* raw bytes (UTF-8 from the harness) pass through unchanged */
        if (!buffer_push(&out, p->text + p->pos, 1)) {
            fail(p, "out of memory");
            break;
        }
        p->pos++;
    }
error:
    free(out.bytes);
    return false;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static json_value *parse_number(parser *p)
{
    size_t start = p->pos;
    bool integral = true;
    if (peek(p) == '-') {
        p->pos++;
    }
    if (peek(p) == '0') {
        p->pos++;
    } else if (is_digit(peek(p))) {
        while (is_digit(peek(p))) {
            p->pos++;
        }
    } else {
        fail(p, "expected a digit");
        return NULL;
    }
    if (peek(p) == '.') {
        integral = false;
        p->pos++;
        if (!is_digit(peek(p))) {
            fail(p, "expected a digit after '.'");
            return NULL;
        }
        while (is_digit(peek(p))) {
            p->pos++;
        }
    }
    if (peek(p) == 'e' || peek(p) == 'E') {
        integral = false;
        p->pos++;
        if (peek(p) == '+' || peek(p) == '-') {
            p->pos++;
        }
        if (!is_digit(peek(p))) {
            fail(p, "expected a digit in the exponent");
            return NULL;
        }
        while (is_digit(peek(p))) {
            p->pos++;
        }
    }
    /* strtod/strtoll need a NUL-terminated copy: the input is not terminated. */
    char literal[352];
    size_t n = p->pos - start;
    if (n >= sizeof literal) {
        p->pos = start;
        fail(p, "number literal too long");
        return NULL;
    }
    memcpy(literal, p->text + start, n);
    literal[n] = '\0';

    json_value *v = new_value(p, JSON_NUMBER);
    if (v == NULL) {
        return NULL;
    }
    v->as.number.value = strtod(literal, NULL);
    if (!isfinite(v->as.number.value)) {
        p->pos = start;
        fail(p, "number out of range");
        free(v);
        return NULL;
    }
    if (integral) {
        errno = 0;
        long long integer = strtoll(literal, NULL, 10);
        if (errno == 0) {
            v->as.number.is_integer = true;
            v->as.number.integer = integer;
        }
    }
    return v;
}

static json_value *parse_array(parser *p)
{
    json_value *v = new_value(p, JSON_ARRAY);
    if (v == NULL) {
        return NULL;
    }
    size_t capacity = 0;
    p->pos++; /* '[' */
    skip_whitespace(p);
    if (peek(p) == ']') {
        p->pos++;
        return v;
    }
    for (;;) {
        json_value *item = parse_value(p);
        if (item == NULL) {
            break;
        }
        if (v->as.array.count == capacity) {
            capacity = capacity ? capacity * 2 : 4;
            json_value **grown = realloc(v->as.array.items, capacity * sizeof *grown);
            if (grown == NULL) {
                json_free(item);
                fail(p, "out of memory");
                break;
            }
            v->as.array.items = grown;
        }
        v->as.array.items[v->as.array.count++] = item;
        skip_whitespace(p);
        if (peek(p) == ',') {
            p->pos++;
            continue;
        }
        if (peek(p) == ']') {
            p->pos++;
            return v;
        }
        fail(p, "expected ',' or ']' in array");
        break;
    }
    json_free(v);
    return NULL;
}

static json_value *parse_object(parser *p)
{
    json_value *v = new_value(p, JSON_OBJECT);
    if (v == NULL) {
        return NULL;
    }
    size_t capacity = 0;
    p->pos++; /* '{' */
    skip_whitespace(p);
    if (peek(p) == '}') {
        p->pos++;
        return v;
    }
    for (;;) {
        skip_whitespace(p);
        if (peek(p) != '"') {
            fail(p, "expected a string key in object");
            break;
        }
        char *key;
        size_t key_length;
        if (!parse_string_chars(p, &key, &key_length)) {
            break;
        }
        skip_whitespace(p);
        if (peek(p) != ':') {
            fail(p, "expected ':' after key");
            free(key);
            break;
        }
        p->pos++;
        json_value *item = parse_value(p);
        if (item == NULL) {
            free(key);
            break;
        }
        if (v->as.object.count == capacity) {
            capacity = capacity ? capacity * 2 : 4;
            json_member *grown = realloc(v->as.object.members, capacity * sizeof *grown);
            if (grown == NULL) {
                free(key);
                json_free(item);
                fail(p, "out of memory");
                break;
            }
            v->as.object.members = grown;
        }
        v->as.object.members[v->as.object.count++] = (json_member){key, key_length, item};
        skip_whitespace(p);
        if (peek(p) == ',') {
            p->pos++;
            continue;
        }
        if (peek(p) == '}') {
            p->pos++;
            return v;
        }
        fail(p, "expected ',' or '}' in object");
        break;
    }
    json_free(v);
    return NULL;
}

static json_value *parse_value(parser *p)
{
    skip_whitespace(p);
    if (at_end(p)) {
        fail(p, "unexpected end of input");
        return NULL;
    }
    if (p->depth >= JSON_MAX_DEPTH) {
        fail(p, "nesting deeper than %d levels", JSON_MAX_DEPTH);
        return NULL;
    }
    json_value *v = NULL;
    char c = peek(p);
    p->depth++;
    switch (c) {
    case '{':
        v = parse_object(p);
        break;
    case '[':
        v = parse_array(p);
        break;
    case '"': {
        char *chars;
        size_t length;
        if (parse_string_chars(p, &chars, &length)) {
            v = new_value(p, JSON_STRING);
            if (v == NULL) {
                free(chars);
            } else {
                v->as.string.chars = chars;
                v->as.string.length = length;
            }
        }
        break;
    }
    case 't':
    case 'f':
        if (expect_literal(p, c == 't' ? "true" : "false")) {
            v = new_value(p, JSON_BOOL);
            if (v != NULL) {
                v->as.boolean = c == 't';
            }
        }
        break;
    case 'n':
        if (expect_literal(p, "null")) {
            v = new_value(p, JSON_NULL);
        }
        break;
    default:
        if (c == '-' || is_digit(c)) {
            v = parse_number(p);
        } else {
            fail(p, "unexpected character '%c'", c);
        }
        break;
    }
    p->depth--;
    return v;
}

json_value *json_parse(const char *text, size_t length, char *error, size_t error_size)
{
    parser p = {.text = text, .length = length, .error = error, .error_size = error_size};
    if (error != NULL && error_size > 0) {
        error[0] = '\0';
    }
    json_value *v = parse_value(&p);
    if (v == NULL) {
        return NULL;
    }
    skip_whitespace(&p);
    if (!at_end(&p)) {
        fail(&p, "unexpected text after the value");
        json_free(v);
        return NULL;
    }
    return v;
}

void json_free(json_value *value)
{
    if (value == NULL) {
        return;
    }
    switch (value->type) {
    case JSON_STRING:
        free(value->as.string.chars);
        break;
    case JSON_ARRAY:
        for (size_t i = 0; i < value->as.array.count; i++) {
            json_free(value->as.array.items[i]);
        }
        free(value->as.array.items);
        break;
    case JSON_OBJECT:
        for (size_t i = 0; i < value->as.object.count; i++) {
            free(value->as.object.members[i].key);
            json_free(value->as.object.members[i].value);
        }
        free(value->as.object.members);
        break;
    case JSON_NULL:
    case JSON_BOOL:
    case JSON_NUMBER:
        break;
    }
    free(value);
}

const json_value *json_object_get(const json_value *object, const char *key)
{
    if (object == NULL || object->type != JSON_OBJECT) {
        return NULL;
    }
    size_t key_length = strlen(key);
    for (size_t i = 0; i < object->as.object.count; i++) {
        const json_member *m = &object->as.object.members[i];
        if (m->key_length == key_length && memcmp(m->key, key, key_length) == 0) {
            return m->value;
        }
    }
    return NULL;
}

bool json_as_integer(const json_value *value, long long *out)
{
    if (value == NULL || value->type != JSON_NUMBER) {
        return false;
    }
    if (value->as.number.is_integer) {
        *out = value->as.number.integer;
        return true;
    }
    double d = value->as.number.value;
    /* 2^63 is exactly representable; every double in [-2^63, 2^63) fits in long long. */
    if (d != floor(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
        return false;
    }
    *out = (long long)d;
    return true;
}
