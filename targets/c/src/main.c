/* msgbench-c: the C worker. One request on stdin, JSON lines on stdout.
 * `msgbench-c --serve` is the server half of the socket workload (target.toml: serve). */
#include <stdio.h>
#include <string.h>

#include "socket_server.h"
#include "workloads.h"

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--serve") == 0) {
        return serve_main(stdin, stdout, stderr);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: %s          (worker: one JSON request on stdin)\n"
                        "       %s --serve  (the socket workload's server half)\n",
                argv[0], argv[0]);
        return 2;
    }
    return c_worker_main(stdin, stdout, stderr);
}
