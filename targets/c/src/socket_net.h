/* Plain blocking TCP sockets: the few helpers both halves of the socket workload use. */
#ifndef MSGBENCH_SOCKET_NET_H
#define MSGBENCH_SOCKET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Every blocking read and write on a workload socket gives up after this long without
 * progress (SO_RCVTIMEO / SO_SNDTIMEO), so nothing hangs. */
#define SOCKET_IO_TIMEOUT_S 60

/* Bytes of framing before each payload: its length, 32-bit big-endian. */
#define FRAME_HEADER_BYTES 4

/* Client and server threads only loop over read and write: a small stack. */
#define SOCKET_THREAD_STACK_BYTES (256 * 1024)

typedef enum {
    IO_OK,      /* all bytes transferred */
    IO_EOF,     /* the peer closed (read: after *done bytes) */
    IO_TIMEOUT, /* nothing moved for SOCKET_IO_TIMEOUT_S */
    IO_ERROR,   /* errno-style code in *error */
} io_status;

/* Writes all length bytes with plain write() calls (one, unless the kernel takes less).
 * SIGPIPE must be ignored (socket_ignore_sigpipe): a closed peer is EPIPE, not death. */
io_status net_write_all(int fd, const void *buffer, size_t length, size_t *done, int *error);

/* Reads exactly length bytes with plain blocking read() calls. */
io_status net_read_exact(int fd, void *buffer, size_t length, size_t *done, int *error);

/* "EOF", "no progress within 60 s" or strerror: for messages. */
const char *net_status_text(io_status status, int error);

/* SO_RCVTIMEO and SO_SNDTIMEO of SOCKET_IO_TIMEOUT_S, and TCP_NODELAY as asked.
 * 0 or an errno value. */
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

/* The 4-byte big-endian header. */
void frame_put_length(unsigned char *header, uint32_t length);
uint32_t frame_get_length(const unsigned char *header);

#endif
