/* Clocks and the process's own resource accounting. */
#ifndef MSGBENCH_MEASURE_H
#define MSGBENCH_MEASURE_H

#include <stdint.h>

/* Nanoseconds on CLOCK_MONOTONIC (not subject to wall-clock jumps). */
int64_t monotonic_ns(void);

/* CPU time of the whole process (all threads), in nanoseconds (CLOCK_PROCESS_CPUTIME_ID). */
int64_t process_cpu_ns(void);

/* Peak resident set size (VmHWM from /proc/self/status) in bytes, or -1 if unreadable. */
int64_t peak_rss_bytes(void);

/* Sleeps until CLOCK_MONOTONIC reaches deadline_ns (restarting after signals). */
void sleep_until_ns(int64_t deadline_ns);

#endif
