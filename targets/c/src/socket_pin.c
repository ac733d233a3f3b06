#define _GNU_SOURCE
#include "socket_pin.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>

int socket_pair_cpu(long long index)
{
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    /* the calling thread's set: a client or handler thread inherits its creator's, and
     * the threads that create them are never pinned */
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) {
        return -1;
    }
    int count = CPU_COUNT(&allowed);
    if (count == 0) {
        return -1;
    }
    long long wanted = index % count;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &allowed) && wanted-- == 0) {
            return cpu;
        }
    }
    return -1;
}

int socket_pin_pair(long long index)
{
    int cpu = socket_pair_cpu(index);
    if (cpu < 0) {
        return errno != 0 ? errno : EINVAL;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    return pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}
