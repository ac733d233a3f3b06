/* targets/c's test suites, on the kit's harness (kits/c/src/check.h). */
#ifndef MSGBENCH_C_TESTS_H
#define MSGBENCH_C_TESTS_H

#include "check.h"

void test_queue(void);
void test_fanin(void);
void test_worker(void);
void test_socket(void);

/* test-msgbench-c --fake-server N [FLIP] (tests/test_socket.c) */
int fake_server(long long echoes, long long flip);

/* test-msgbench-c --hold-server (tests/test_socket.c) */
int hold_server(void);

#endif
