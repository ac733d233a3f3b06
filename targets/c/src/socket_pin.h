/* The tuned socket variant's thread placement: the client thread and the server thread
 * of pair k run on one CPU, so each echo hands over to a thread on the same CPU instead
 * of waking one on another (on the 2-vCPU dev VM a cross-CPU wake-up costs ~4x a
 * same-CPU one: docs/fair-clients.md). Both halves compute the CPU alike, from their own
 * allowed set, so the pair meets without talking about it. */
#ifndef MSGBENCH_SOCKET_PIN_H
#define MSGBENCH_SOCKET_PIN_H

/* The CPU of pair index: the (index mod n)-th of the n CPUs this process may run on, in
 * ascending order; -1 if the allowed set cannot be read. */
int socket_pair_cpu(long long index);

/* Pins the calling thread to socket_pair_cpu(index): 0, or an errno value. */
int socket_pin_pair(long long index);

#endif
