#include "options.h"

#include <stdio.h>
#include <string.h>

/* Appends text at *used, truncating at size (the message stays NUL-terminated). */
static void append(char *message, size_t size, size_t *used, const char *text)
{
    int n = snprintf(message + *used, size - *used, "%s", text);
    if (n > 0) {
        *used += (size_t)n < size - *used ? (size_t)n : size - *used - 1;
    }
}

static void append_list(char *message, size_t size, size_t *used, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        append(message, size, used, i > 0 ? ", " : "");
        append(message, size, used, names[i]);
    }
}

static bool listed(const char *name, const char *const *names, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        if (strcmp(name, names[i]) == 0) {
            return true;
        }
    }
    return false;
}

bool options_only(const json_value *options, const char *const *known, size_t known_count, char *message,
                  size_t message_size)
{
    size_t used = 0;
    size_t unknown = 0;
    message[0] = '\0';
    for (size_t i = 0; i < options->as.object.count; i++) {
        const char *name = options->as.object.members[i].key;
        if (!listed(name, known, known_count)) {
            append(message, message_size, &used, unknown++ == 0 ? "unknown option " : ", ");
            append(message, message_size, &used, name);
        }
    }
    if (unknown == 0) {
        return true;
    }
    append(message, message_size, &used, " (known here: ");
    append_list(message, message_size, &used, known, known_count);
    append(message, message_size, &used, known_count == 0 ? "none)" : ")");
    return false;
}

/* The value as the message shows it: a string quoted, a number, else its JSON type. */
static void describe(const json_value *v, char *out, size_t size)
{
    switch (v->type) {
    case JSON_STRING: snprintf(out, size, "\"%s\"", v->as.string.chars); break;
    case JSON_NUMBER: snprintf(out, size, "%g", v->as.number.value); break;
    case JSON_BOOL: snprintf(out, size, "%s", v->as.boolean ? "true" : "false"); break;
    case JSON_NULL: snprintf(out, size, "null"); break;
    case JSON_ARRAY: snprintf(out, size, "an array"); break;
    case JSON_OBJECT: snprintf(out, size, "an object"); break;
    }
}

int option_choice(const json_value *options, const char *name, const char *const *accepted, size_t accepted_count,
                  int fallback, char *message, size_t message_size)
{
    const json_value *v = json_object_get(options, name);
    if (v == NULL) {
        return fallback;
    }
    for (size_t i = 0; v->type == JSON_STRING && i < accepted_count; i++) {
        if (strcmp(v->as.string.chars, accepted[i]) == 0) {
            return (int)i;
        }
    }
    char value[64];
    describe(v, value, sizeof value);
    size_t used = 0;
    message[0] = '\0';
    append(message, message_size, &used, "option ");
    append(message, message_size, &used, name);
    append(message, message_size, &used, " = ");
    append(message, message_size, &used, value);
    append(message, message_size, &used, ": expected one of ");
    append_list(message, message_size, &used, accepted, accepted_count);
    append(message, message_size, &used, " (target.toml)");
    return -1;
}
