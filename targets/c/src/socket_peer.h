/* The worker's side of "Peers" (spec/README.md): start the server half from
 * MSGBENCH_PEER_COMMAND in MSGBENCH_PEER_CWD, write it the request (its stdin stays
 * open), read its JSON lines with time limits, and end it. */
#ifndef MSGBENCH_SOCKET_PEER_H
#define MSGBENCH_SOCKET_PEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PEER_LINE_BYTES 4096

typedef struct {
    pid_t pid;
    int stdin_fd;  /* our end of its stdin, -1 once closed */
    int stdout_fd; /* our end of its stdout */
    char buffer[PEER_LINE_BYTES];
    size_t used;
    bool eof;
    bool exited;
    int status; /* waitpid status once exited */
} peer;

/* A server command: argv (NULL-terminated), the directory to run it in, and the host
 * the client connects to. */
typedef struct {
    char **argv;
    char *cwd;
    char *host;
    bool from_environment; /* false: our own `--serve` on 127.0.0.1 */
} peer_command;

/* From MSGBENCH_PEER_COMMAND (a JSON array of strings), MSGBENCH_PEER_CWD and
 * MSGBENCH_PEER_HOST; when MSGBENCH_PEER_COMMAND is absent, this very executable with
 * --serve, in the current directory, on 127.0.0.1. False with a message if the
 * variable does not hold a JSON array of strings. */
bool peer_command_from_environment(peer_command *command, char *message, size_t message_size);
void peer_command_free(peer_command *command);

/* Starts the command with pipes on its stdin and stdout (stderr is ours). False with
 * the errno value in *error_code and a message. */
bool peer_start(peer *p, const peer_command *command, int *error_code, char *message, size_t message_size);

/* Writes all bytes to its stdin. False if it is gone (EPIPE). */
bool peer_write(peer *p, const char *bytes, size_t length);

typedef enum { PEER_LINE, PEER_TIMEOUT, PEER_EOF } peer_line_status;

/* The next line of its stdout (newline removed, NUL-terminated, cut at PEER_LINE_BYTES)
 * before CLOCK_MONOTONIC reaches deadline_ns. */
peer_line_status peer_read_line(peer *p, int64_t deadline_ns, char *line, size_t line_size);

/* Closes its stdin (a server then exits), waits for it to exit until deadline_ns and
 * kills it (SIGKILL) if it has not. True if it exited by itself. */
bool peer_finish(peer *p, int64_t deadline_ns);

/* "exit status 1", "killed by signal 9", "still running": for messages. */
void peer_describe_exit(const peer *p, char *text, size_t size);

#endif
