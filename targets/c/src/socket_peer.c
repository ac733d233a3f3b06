#define _GNU_SOURCE
#include "socket_peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json.h"
#include "measure.h"

extern char **environ;

static char *copy_string(const char *s)
{
    size_t length = strlen(s) + 1;
    char *copy = malloc(length);
    if (copy != NULL) {
        memcpy(copy, s, length);
    }
    return copy;
}

void peer_command_free(peer_command *command)
{
    if (command->argv != NULL) {
        for (char **arg = command->argv; *arg != NULL; arg++) {
            free(*arg);
        }
        free(command->argv);
    }
    free(command->cwd);
    free(command->host);
    memset(command, 0, sizeof *command);
}

bool peer_command_from_environment(peer_command *command, char *message, size_t message_size)
{
    memset(command, 0, sizeof *command);
    const char *text = getenv("MSGBENCH_PEER_COMMAND");
    const char *cwd = getenv("MSGBENCH_PEER_CWD");
    const char *host = getenv("MSGBENCH_PEER_HOST");
    command->from_environment = text != NULL;
    command->cwd = copy_string(cwd != NULL && cwd[0] != '\0' ? cwd : ".");
    command->host = copy_string(host != NULL && host[0] != '\0' ? host : "127.0.0.1");
    size_t count = 0;
    if (text == NULL) {
        char self[4096];
        ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
        if (n <= 0) {
            snprintf(message, message_size, "MSGBENCH_PEER_COMMAND is not set and /proc/self/exe is unreadable");
            peer_command_free(command);
            return false;
        }
        self[n] = '\0';
        count = 2;
        command->argv = calloc(count + 1, sizeof *command->argv);
        if (command->argv != NULL) {
            command->argv[0] = copy_string(self);
            command->argv[1] = copy_string("--serve");
        }
    } else {
        char error[256];
        json_value *array = json_parse(text, strlen(text), error, sizeof error);
        bool valid = array != NULL && array->type == JSON_ARRAY && array->as.array.count > 0;
        for (size_t i = 0; valid && i < array->as.array.count; i++) {
            valid = array->as.array.items[i]->type == JSON_STRING;
        }
        if (!valid) {
            snprintf(message, message_size,
                     "MSGBENCH_PEER_COMMAND must be a non-empty JSON array of strings, not %.200s", text);
            json_free(array);
            peer_command_free(command);
            return false;
        }
        count = array->as.array.count;
        command->argv = calloc(count + 1, sizeof *command->argv);
        for (size_t i = 0; command->argv != NULL && i < count; i++) {
            command->argv[i] = copy_string(array->as.array.items[i]->as.string.chars);
        }
        json_free(array);
    }
    bool complete = command->argv != NULL && command->cwd != NULL && command->host != NULL;
    for (size_t i = 0; complete && i < count; i++) {
        complete = command->argv[i] != NULL;
    }
    if (!complete) {
        snprintf(message, message_size, "out of memory building the server command");
        peer_command_free(command);
        return false;
    }
    return true;
}

bool peer_start(peer *p, const peer_command *command, int *error_code, char *message, size_t message_size)
{
    memset(p, 0, sizeof *p);
    p->stdin_fd = -1;
    p->stdout_fd = -1;
    int to_child[2];
    int from_child[2];
    if (pipe2(to_child, O_CLOEXEC) != 0) {
        *error_code = errno;
        snprintf(message, message_size, "cannot start the server: pipe: %s", strerror(errno));
        return false;
    }
    if (pipe2(from_child, O_CLOEXEC) != 0) {
        *error_code = errno;
        snprintf(message, message_size, "cannot start the server: pipe: %s", strerror(errno));
        close(to_child[0]);
        close(to_child[1]);
        return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    /* dup2 clears close-on-exec on the copies: the child keeps exactly stdin, stdout and
     * our stderr; every other descriptor of ours is O_CLOEXEC */
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    posix_spawn_file_actions_addchdir_np(&actions, command->cwd);
    int error = posix_spawnp(&p->pid, command->argv[0], &actions, NULL, command->argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(to_child[0]);
    close(from_child[1]);
    if (error != 0) {
        *error_code = error;
        snprintf(message, message_size, "cannot start the server %s in %s: %s", command->argv[0], command->cwd,
                 strerror(error));
        close(to_child[1]);
        close(from_child[0]);
        return false;
    }
    p->stdin_fd = to_child[1];
    p->stdout_fd = from_child[0];
    return true;
}

bool peer_write(peer *p, const char *bytes, size_t length)
{
    size_t done = 0;
    while (done < length) {
        ssize_t n = write(p->stdin_fd, bytes + done, length - done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return false;
        }
        done += (size_t)n;
    }
    return true;
}

/* Moves the first line of the buffer (if any) to line; true if there was one. */
static bool take_line(peer *p, char *line, size_t line_size)
{
    char *newline = memchr(p->buffer, '\n', p->used);
    bool full = newline == NULL && p->used == sizeof p->buffer;
    if (newline == NULL && !full && !(p->eof && p->used > 0)) {
        return false;
    }
    size_t length = newline != NULL ? (size_t)(newline - p->buffer) : p->used;
    size_t copy = length < line_size - 1 ? length : line_size - 1;
    memcpy(line, p->buffer, copy);
    line[copy] = '\0';
    size_t consumed = newline != NULL ? length + 1 : length;
    memmove(p->buffer, p->buffer + consumed, p->used - consumed);
    p->used -= consumed;
    return true;
}

peer_line_status peer_read_line(peer *p, int64_t deadline_ns, char *line, size_t line_size)
{
    for (;;) {
        if (take_line(p, line, line_size)) {
            return PEER_LINE;
        }
        if (p->eof) {
            return PEER_EOF;
        }
        int64_t left_ns = deadline_ns - monotonic_ns();
        if (left_ns <= 0) {
            return PEER_TIMEOUT;
        }
        struct pollfd poller = {.fd = p->stdout_fd, .events = POLLIN};
        int ready = poll(&poller, 1, (int)((left_ns + 999999) / 1000000));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            continue; /* the deadline check above decides */
        }
        ssize_t n = read(p->stdout_fd, p->buffer + p->used, sizeof p->buffer - p->used);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            p->eof = true;
        } else {
            p->used += (size_t)n;
        }
    }
}

bool peer_finish(peer *p, int64_t deadline_ns)
{
    if (p->stdin_fd >= 0) {
        close(p->stdin_fd);
        p->stdin_fd = -1;
    }
    bool by_itself = true;
    while (!p->exited && p->pid > 0) {
        pid_t done = waitpid(p->pid, &p->status, WNOHANG);
        if (done == p->pid || (done < 0 && errno != EINTR)) {
            p->exited = true;
            break;
        }
        if (monotonic_ns() >= deadline_ns) {
            kill(p->pid, SIGKILL);
            by_itself = false;
            while (waitpid(p->pid, &p->status, 0) < 0 && errno == EINTR) {
            }
            p->exited = true;
            break;
        }
        struct timespec pause = {0, 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (p->stdout_fd >= 0) {
        close(p->stdout_fd);
        p->stdout_fd = -1;
    }
    return by_itself;
}

void peer_describe_exit(const peer *p, char *text, size_t size)
{
    if (!p->exited) {
        snprintf(text, size, "still running");
    } else if (WIFEXITED(p->status)) {
        snprintf(text, size, "exit status %d", WEXITSTATUS(p->status));
    } else if (WIFSIGNALED(p->status)) {
        snprintf(text, size, "killed by signal %d", WTERMSIG(p->status));
    } else {
        snprintf(text, size, "status %d", p->status);
    }
}
