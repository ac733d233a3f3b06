/* Running the worker in-process on a request and looking at its JSON lines. */
#ifndef MSGBENCH_TEST_WORKER_RUN_H
#define MSGBENCH_TEST_WORKER_RUN_H

#include <stddef.h>

#include "json.h"

enum { MAX_LINES = 8 };

typedef struct {
    int status;
    size_t count;
    json_value *lines[MAX_LINES];
    int all_json; /* every stdout line parsed as a JSON object */
} worker_output;

/* Splits text (modified) into lines and parses each as a JSON object. */
void parse_lines(char *text, worker_output *w);

/* worker_main on request, its stdout collected, its log discarded. */
worker_output run_worker(const char *request);

void release(worker_output *w);

/* The member as a string ("" if absent or not a string) or an integer (-1). */
const char *string_of(const json_value *object, const char *key);
long long integer_of(const json_value *object, const char *key);

/* The output is a hello then exactly one error of this kind whose message has this text. */
int answered_error(const char *request, const char *kind, const char *text);

#endif
