#define _GNU_SOURCE
#include "socket_net.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* sendto/recvfrom, not write()/read(): on a socket they skip the VFS layer's per-call
 * work (rw_verify_area, the security and fsnotify hooks), about 1 µs per echo round trip
 * of four calls on the dev VM, 16.6 -> 14.9 µs pinned (docs/measurements/issue-13-socket.md).
 * And the system calls themselves, not glibc's send()/recv(): in a process that has
 * started a thread (a worker or server of more than one pair: its I/O threads and the
 * watchdog) those wrappers are cancellation points, an atomic read-modify-write before
 * and after the call. Nothing here is ever cancelled (no pthread_cancel), and the four calls of a round
 * trip paid ~0.15 µs of 14 µs pinned for it, a cost sockperf's single-threaded processes
 * do not have. */
ssize_t net_send(int fd, const void *buffer, size_t length, int flags)
{
    return syscall(SYS_sendto, fd, buffer, length, flags, NULL, 0);
}

ssize_t net_recv(int fd, void *buffer, size_t length, int flags)
{
    return syscall(SYS_recvfrom, fd, buffer, length, flags, NULL, NULL);
}

io_status net_write_all(int fd, io_watch *watch, const void *buffer, size_t length, size_t *done, int *error)
{
    const unsigned char *p = buffer;
    size_t written = 0;
    io_status status = IO_OK;
    while (written < length) {
        ssize_t n = net_send(fd, p + written, length - written, MSG_NOSIGNAL);
        if (n > 0) {
            written += (size_t)n;
            io_watch_moved(watch, n);
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            *error = n < 0 ? errno : EIO;
            status = (*error == EPIPE || *error == ECONNRESET) ? IO_EOF : IO_ERROR;
            break;
        }
    }
    if (status != IO_OK && io_watch_timed_out(watch)) {
        status = IO_TIMEOUT; /* the EPIPE of the watchdog's shutdown */
    }
    if (done != NULL) {
        *done = written;
    }
    return status;
}

io_status net_read_exact(int fd, io_watch *watch, void *buffer, size_t length, size_t *done, int *error)
{
    unsigned char *p = buffer;
    size_t got = 0;
    io_status status = IO_OK;
    while (got < length) {
        ssize_t n = net_recv(fd, p + got, length - got, 0);
        if (n > 0) {
            got += (size_t)n;
            io_watch_moved(watch, n);
        } else if (n == 0) {
            status = IO_EOF;
            break;
        } else if (errno == EINTR) {
            continue;
        } else {
            *error = errno;
            status = errno == ECONNRESET ? IO_EOF : IO_ERROR;
            break;
        }
    }
    if (status != IO_OK && io_watch_timed_out(watch)) {
        status = IO_TIMEOUT; /* the EOF of the watchdog's shutdown */
    }
    if (done != NULL) {
        *done = got;
    }
    return status;
}

const char *net_status_text(io_status status, int error)
{
    switch (status) {
    case IO_OK: return "ok";
    case IO_EOF: return error == ECONNRESET ? "connection reset" : error == EPIPE ? "broken pipe" : "EOF";
    case IO_TIMEOUT: return watchdog_timeout_text();
    case IO_ERROR: return strerror(error);
    }
    return "?";
}

/* No SO_RCVTIMEO/SO_SNDTIMEO: the watchdog (socket_watchdog.h) bounds every wait instead,
 * without a kernel timer per blocking call. */
int net_configure(int fd, bool nodelay)
{
    int on = nodelay ? 1 : 0;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on) != 0) {
        return errno;
    }
    return 0;
}

/* connect() on a non-blocking socket, poll for completion within timeout_ms, then back
 * to blocking. 0 or an errno value (ETIMEDOUT). */
static int connect_within(int fd, const struct sockaddr *address, socklen_t length, int timeout_ms)
{
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
        return errno;
    }
    int result = 0;
    if (connect(fd, address, length) != 0) {
        if (errno != EINPROGRESS) {
            return errno;
        }
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int ready;
        do {
            ready = poll(&p, 1, timeout_ms);
        } while (ready < 0 && errno == EINTR);
        if (ready == 0) {
            return ETIMEDOUT;
        }
        if (ready < 0) {
            return errno;
        }
        socklen_t size = sizeof result;
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &result, &size) != 0) {
            return errno;
        }
    }
    if (result == 0 && fcntl(fd, F_SETFL, flags) != 0) {
        return errno;
    }
    return result;
}

int net_connect(const char *host, int port, int timeout_ms, char *message, size_t message_size)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICSERV};
    struct addrinfo *addresses = NULL;
    int gai = getaddrinfo(host, service, &hints, &addresses);
    if (gai != 0) {
        snprintf(message, message_size, "cannot resolve %s: %s", host, gai_strerror(gai));
        return -1;
    }
    int error = 0;
    for (const struct addrinfo *a = addresses; a != NULL; a = a->ai_next) {
        int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
        if (fd < 0) {
            error = errno;
            continue;
        }
        error = connect_within(fd, a->ai_addr, a->ai_addrlen, timeout_ms);
        if (error == 0) {
            freeaddrinfo(addresses);
            return fd;
        }
        close(fd);
    }
    freeaddrinfo(addresses);
    snprintf(message, message_size, "cannot connect to %s port %d: %s", host, port, strerror(error));
    return -1;
}

/* Descriptors open now (entries of /proc/self/fd, less the directory's own). */
static long long open_fds(void)
{
    DIR *dir = opendir("/proc/self/fd");
    if (dir == NULL) {
        return 64; /* a guess on a system without /proc */
    }
    long long count = 0;
    const struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] != '.') {
            count++;
        }
    }
    closedir(dir);
    return count - 1;
}

bool net_reserve_fds(long long fds, char *message, size_t message_size)
{
    struct rlimit limit;
    if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
        return true; /* nothing to learn: socket() will say */
    }
    long long need = open_fds() + fds;
    if (limit.rlim_cur != RLIM_INFINITY && (long long)limit.rlim_cur < need) {
        if (limit.rlim_max != RLIM_INFINITY && (long long)limit.rlim_max < need) {
            snprintf(message, message_size,
                     "sockets need %lld file descriptors, more than the hard limit RLIMIT_NOFILE = %lld (ulimit -Hn)",
                     need, (long long)limit.rlim_max);
            return false;
        }
        limit.rlim_cur = (rlim_t)need;
        if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
            snprintf(message, message_size, "sockets need %lld file descriptors; raising RLIMIT_NOFILE failed: %s",
                     need, strerror(errno));
            return false;
        }
    }
    return true;
}

long long net_physical_memory_bytes(void)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page_size = sysconf(_SC_PAGESIZE);
    return pages > 0 && page_size > 0 ? (long long)pages * page_size : 0;
}

void socket_ignore_sigpipe(void)
{
    struct sigaction ignore;
    memset(&ignore, 0, sizeof ignore);
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, NULL);
}

void frame_put_length(unsigned char *header, uint32_t length)
{
    header[0] = (unsigned char)(length >> 24);
    header[1] = (unsigned char)(length >> 16);
    header[2] = (unsigned char)(length >> 8);
    header[3] = (unsigned char)length;
}

uint32_t frame_get_length(const unsigned char *header)
{
    return (uint32_t)header[0] << 24 | (uint32_t)header[1] << 16 | (uint32_t)header[2] << 8 | (uint32_t)header[3];
}

#define BUFFER_ALIGNMENT 4096 /* a page on x86-64 and most others; a larger page only aligns less */
#define CACHE_LINE_BYTES 64

void *net_buffer_alloc(size_t bytes)
{
    /* aligned_alloc wants a size that is a multiple of the alignment */
    size_t whole_pages = (bytes + BUFFER_ALIGNMENT - 1) / BUFFER_ALIGNMENT * BUFFER_ALIGNMENT;
    return aligned_alloc(BUFFER_ALIGNMENT, whole_pages > 0 ? whole_pages : BUFFER_ALIGNMENT);
}

size_t net_buffer_stride(size_t bytes)
{
    return (bytes + CACHE_LINE_BYTES - 1) / CACHE_LINE_BYTES * CACHE_LINE_BYTES;
}
