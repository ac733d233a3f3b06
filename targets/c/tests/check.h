/* A minimal test harness: CHECK counts instead of aborting, so one run reports every
 * failure; test_main prints "N passed, M failed" and fails if M > 0. */
#ifndef MSGBENCH_TEST_CHECK_H
#define MSGBENCH_TEST_CHECK_H

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

void test_queue(void);
void test_fanin(void);
void test_worker(void);
void test_socket(void);

/* test-msgbench-c --fake-server N [FLIP] (tests/test_socket.c) */
int fake_server(long long echoes, long long flip);

#endif
