#include <stdio.h>

#include "check.h"

int checks_passed;
int checks_failed;

int main(void)
{
    struct {
        const char *name;
        void (*run)(void);
    } suites[] = {
        {"json", test_json},
        {"kit", test_kit},
    };
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++) {
        int failed_before = checks_failed;
        suites[i].run();
        fprintf(stderr, "suite %-5s %s\n", suites[i].name, checks_failed == failed_before ? "ok" : "FAILED");
    }
    printf("%d passed, %d failed\n", checks_passed, checks_failed);
    return checks_failed == 0 ? 0 : 1;
}
