/* The c target's workloads, as the kit's worker (kits/c: worker.h) runs them. */
#ifndef MSGBENCH_WORKLOADS_H
#define MSGBENCH_WORKLOADS_H

#include <stdio.h>

/* One worker run of this target: kits/c's worker_run on fanin and socket. */
int c_worker_main(FILE *in, FILE *out, FILE *log);

#endif
