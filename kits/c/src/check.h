/* The C tests' harness, the kit's and a target's: CHECK counts instead of aborting, so one
 * run reports every failure; check_suites runs each suite, says which failed, prints
 * "N passed, M failed" and returns the exit status. The test main defines the two
 * counters (tests only: no worker binary includes this). */
#ifndef MSGBENCH_CHECK_H
#define MSGBENCH_CHECK_H

#include <stddef.h>
#include <stdio.h>

extern int checks_passed;
extern int checks_failed;

#define CHECK(condition)                                                                 \
    do {                                                                                 \
        if (condition) {                                                                 \
            checks_passed++;                                                             \
        } else {                                                                         \
            checks_failed++;                                                             \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #condition); \
        }                                                                                \
    } while (0)

typedef struct {
    const char *name;
    void (*run)(void);
} check_suite;

static inline int check_suites(const check_suite *suites, size_t count)
{
    for (size_t i = 0; i < count; i++) {
        int failed_before = checks_failed;
        suites[i].run();
        fprintf(stderr, "suite %-7s %s\n", suites[i].name, checks_failed == failed_before ? "ok" : "FAILED");
    }
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}

#endif
