#include "params.h"

#include <stdio.h>

param_reader param_reader_of(const json_value *object)
{
    return (param_reader){.object = object};
}

/* The member, or NULL after noting it as missing (the first miss is the one reported). */
static const json_value *member(param_reader *r, const char *name, json_type type, const char *expected)
{
    const json_value *v = json_object_get(r->object, name);
    if (v != NULL && v->type == type) {
        return v;
    }
    if (r->missing == NULL) {
        r->missing = name;
        r->expected = expected;
    }
    return NULL;
}

long long param_integer(param_reader *r, const char *name)
{
    long long n = 0;
    const json_value *v = member(r, name, JSON_NUMBER, "an integer");
    if (v != NULL && !json_as_integer(v, &n) && r->missing == NULL) {
        r->missing = name;
        r->expected = "an integer";
    }
    return n;
}

double param_number(param_reader *r, const char *name)
{
    const json_value *v = member(r, name, JSON_NUMBER, "a number");
    return v != NULL ? v->as.number.value : 0.0;
}

const char *param_string(param_reader *r, const char *name)
{
    const json_value *v = member(r, name, JSON_STRING, "a string");
    return v != NULL ? v->as.string.chars : "";
}

const json_value *param_array(param_reader *r, const char *name)
{
    return member(r, name, JSON_ARRAY, "an array");
}

bool param_reader_ok(const param_reader *r, const char *prefix, char *message, size_t message_size)
{
    if (r->missing == NULL) {
        return true;
    }
    snprintf(message, message_size, "%s%s is absent or not %s (the harness sends every field, checked)",
             prefix, r->missing, r->expected);
    return false;
}
