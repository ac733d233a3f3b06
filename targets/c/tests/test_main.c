#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

int checks_passed;
int checks_failed;

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--fake-server") == 0) {
        return fake_server(atoll(argv[2]), argc == 4 ? atoll(argv[3]) : -1);
    }
    struct {
        const char *name;
        void (*run)(void);
    } suites[] = {
        {"queue", test_queue},
        {"fanin", test_fanin},
        {"worker", test_worker},
        {"socket", test_socket},
    };
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        int failed_before = checks_failed;
        suites[i].run();
        fprintf(stderr, "suite %-7s %s\n", suites[i].name, checks_failed == failed_before ? "ok" : "FAILED");
    }
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
