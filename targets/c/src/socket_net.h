/* Plain blocking TCP sockets: the few helpers both halves of the socket workload use. */
#ifndef MSGBENCH_SOCKET_NET_H
#define MSGBENCH_SOCKET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "socket_watchdog.h"

/* Every blocking read and write on a workload socket gives up after SOCKET_IO_TIMEOUT_S
 * without progress, so nothing hangs: the helpers below count the bytes they move in the
 * connection's io_watch, and the process's watchdog shuts down a socket whose count
 * stands still (socket_watchdog.h). No SO_RCVTIMEO/SO_SNDTIMEO: their timer, armed and
 * cancelled by every blocking call, costs ~0.3 us per echo round trip
 * (docs/measurements/issue-13-socket.md). */

/* Bytes of framing before each payload: its length, 32-bit big-endian. */
#define FRAME_HEADER_BYTES 4

/* Client and server threads only loop over read and write: a small stack. */
#define SOCKET_THREAD_STACK_BYTES (256 * 1024)

typedef enum {
    IO_OK,      /* all bytes transferred */
    IO_EOF,     /* the peer closed (read: after *done bytes) */
    IO_TIMEOUT, /* the watchdog saw nothing move for its timeout and shut the socket down */
    IO_ERROR,   /* errno-style code in *error */
} io_status;

/* send() and recv() without glibc's cancellation point (socket_net.c says why): the
 * same system calls, the same results and errno. */
ssize_t net_send(int fd, const void *buffer, size_t length, int flags);
ssize_t net_recv(int fd, void *buffer, size_t length, int flags);

/* Writes all length bytes with plain send() calls (one, unless the kernel takes less),
 * counting them in watch. SIGPIPE must be ignored (socket_ignore_sigpipe): a closed
 * peer is EPIPE, not death. */
io_status net_write_all(int fd, io_watch *watch, const void *buffer, size_t length, size_t *done, int *error);

/* Reads exactly length bytes with plain blocking recv() calls, counting them in watch. */
io_status net_read_exact(int fd, io_watch *watch, void *buffer, size_t length, size_t *done, int *error);

/* "EOF", "no progress within 60 s" (the timeout in force) or strerror: for messages. */
const char *net_status_text(io_status status, int error);

/* TCP_NODELAY as asked. 0 or an errno value. */
int net_configure(int fd, bool nodelay);

/* A blocking TCP connection to host:port, trying each address getaddrinfo gives, each
 * within timeout_ms. The fd, or -1 with a message. */
int net_connect(const char *host, int port, int timeout_ms, char *message, size_t message_size);

/* Makes sure this process may hold `fds` more descriptors than it has now, raising the
 * soft RLIMIT_NOFILE up to the hard one if needed. False with a message if not. */
bool net_reserve_fds(long long fds, char *message, size_t message_size);

/* Physical memory of this host in bytes. */
long long net_physical_memory_bytes(void);

/* Ignores SIGPIPE for the whole process (writes to a closed socket or pipe then fail
 * with EPIPE). */
void socket_ignore_sigpipe(void);

/* A buffer the kernel copies messages into or out of, starting on a page: the copy
 * (rep movsb) is faster from and to an aligned address than from malloc's 16-byte one,
 * ~0.3 us of a 64 KiB echo round trip of 34 us pinned (docs/measurements/issue-13-socket.md).
 * Freed with free(); NULL when out of memory. */
void *net_buffer_alloc(size_t bytes);

/* Bytes from one message buffer to the next in a block of them: whole cache lines, so
 * each buffer starts aligned as its block does. */
size_t net_buffer_stride(size_t bytes);

/* The 4-byte big-endian header. */
void frame_put_length(unsigned char *header, uint32_t length);
uint32_t frame_get_length(const unsigned char *header);

#endif
