#define _GNU_SOURCE
#include "measure.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_S INT64_C(1000000000)

int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t process_cpu_ns(void)
{
    /* the scheduler's own ns count, all threads; getrusage rounds to the tick here (10 ms) */
    struct timespec ts;
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) {
        return 0;
    }
    return (int64_t)ts.tv_sec * NS_PER_S + ts.tv_nsec;
}

int64_t peak_rss_bytes(void)
{
    FILE *status = fopen("/proc/self/status", "r");
    if (status == NULL) {
        return -1;
    }
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, status) != NULL) {
        if (strncmp(line, "VmHWM:", 6) == 0) {
            if (sscanf(line + 6, "%lld", &kib) != 1) {
                kib = -1;
            }
            break;
        }
    }
    fclose(status);
    return kib < 0 ? -1 : (int64_t)kib * 1024;
}

void sleep_until_ns(int64_t deadline_ns)
{
    struct timespec deadline = {
        .tv_sec = (time_t)(deadline_ns / NS_PER_S),
        .tv_nsec = (long)(deadline_ns % NS_PER_S),
    };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
    }
}
