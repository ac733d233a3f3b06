/* A variant's options, as the request carries them (target.toml's options table). A
 * workload names the options it reads: any other is an error naming it and listing the
 * known ones, never silently ignored, since a worker that ignored one would measure
 * something else than its variant says (tests/test_conformance.py reads the list). */
#ifndef MSGBENCH_OPTIONS_H
#define MSGBENCH_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"

/* False with "unknown option a, b (known here: x, y)" ("none" when known is empty) when
 * options holds a name not in known[0..known_count). */
bool options_only(const json_value *options, const char *const *known, size_t known_count, char *message,
                  size_t message_size);

/* The index in accepted[0..accepted_count) of the string option name, or fallback when
 * the variant does not set it; -1 with "option NAME = VALUE: expected one of ..." for
 * any other value (a string not listed, or not a string). */
int option_choice(const json_value *options, const char *name, const char *const *accepted, size_t accepted_count,
                  int fallback, char *message, size_t message_size);

#endif
