#include "suites.h"

int checks_passed;
int checks_failed;

int main(void)
{
    const check_suite suites[] = {{"json", test_json}, {"kit", test_kit}, {"histogram", test_histogram}};
    return check_suites(suites, sizeof suites / sizeof suites[0]);
}
