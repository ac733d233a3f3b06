#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"

int checks_passed;
int checks_failed;

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--hold-server") == 0) {
        return hold_server();
    }
    if ((argc == 3 || argc == 4) && strcmp(argv[1], "--fake-server") == 0) {
        return fake_server(atoll(argv[2]), argc == 4 ? atoll(argv[3]) : -1);
    }
    const check_suite suites[] = {
        {"queue", test_queue}, {"fanin", test_fanin}, {"worker", test_worker}, {"socket", test_socket}};
    return check_suites(suites, sizeof suites / sizeof suites[0]);
}
