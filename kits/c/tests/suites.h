/* The kit's test suites, on the kit's harness (src/check.h). */
#ifndef MSGBENCH_KIT_TESTS_H
#define MSGBENCH_KIT_TESTS_H

#include "check.h"

void test_json(void);
void test_kit(void);
void test_histogram(void);

#endif
