/* msgbench-c: the C worker. One request on stdin, JSON lines on stdout. */
#include <stdio.h>

#include "worker.h"

int main(void) { return worker_main(stdin, stdout, stderr); }
