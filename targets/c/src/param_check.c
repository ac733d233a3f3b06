#include "param_check.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool param_reject(param_complaint *c, error_kind kind, const char *format, ...)
{
    *c->kind = kind;
    va_list args;
    va_start(args, format);
    vsnprintf(c->message, c->message_size, format, args);
    va_end(args);
    return false;
}

bool param_check_names(param_complaint *c, const json_value *params, const char *workload,
                       const char *const *names, size_t count)
{
    if (params == NULL || params->type != JSON_OBJECT) {
        return param_reject(c, ERROR_BAD_PARAMS, "params must be an object");
    }
    for (size_t i = 0; i < params->as.object.count; i++) {
        const char *name = params->as.object.members[i].key;
        bool known = false;
        for (size_t j = 0; j < count; j++) {
            known = known || strcmp(name, names[j]) == 0;
        }
        if (!known) {
            /* "a, b and c" */
            char list[256] = "";
            size_t used = 0;
            for (size_t j = 0; j < count && used < sizeof list; j++) {
                const char *separator = j == 0 ? "" : j + 1 == count ? " and " : ", ";
                int n = snprintf(list + used, sizeof list - used, "%s%s", separator, names[j]);
                used += n > 0 ? (size_t)n : 0;
            }
            return param_reject(c, ERROR_BAD_PARAMS, "%s is not a parameter of %s: its parameters are %s", name,
                                workload, list);
        }
    }
    return true;
}

bool param_integer(param_complaint *c, const json_value *params, const char *name, long long min,
                   long long max, const char *why, long long *out)
{
    const json_value *v = json_object_get(params, name);
    if (v == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "%s is missing: %s must be an integer between %lld and %lld",
                            name, name, min, max);
    }
    char given[96];
    json_format(v, given, sizeof given);
    if (!json_as_integer(v, out) || *out < min || *out > max) {
        return param_reject(c, ERROR_BAD_PARAMS,
                            "%s = %s is out of range: %s must be an integer between %lld and %lld%s", name, given,
                            name, min, max, why);
    }
    return true;
}

bool param_choice(param_complaint *c, const json_value *params, const char *name, const char *first,
                  const char *second, int *out)
{
    const json_value *v = json_object_get(params, name);
    if (v == NULL) {
        return param_reject(c, ERROR_BAD_PARAMS, "%s is missing: %s must be \"%s\" or \"%s\"", name, name, first,
                            second);
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
    return param_reject(c, ERROR_BAD_PARAMS, "%s = %s is not valid: %s must be \"%s\" or \"%s\"", name, given,
                        name, first, second);
}
