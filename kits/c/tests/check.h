/* A minimal test harness, as targets/c's: CHECK counts instead of aborting, so one run
 * reports every failure; test_main prints "N passed, M failed" and fails if M > 0. */
#ifndef MSGBENCH_KIT_TEST_CHECK_H
#define MSGBENCH_KIT_TEST_CHECK_H

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

void test_json(void);
void test_kit(void);

#endif
