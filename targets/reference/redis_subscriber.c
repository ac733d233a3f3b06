/* A reference subscriber for redis-benchmark's PUBLISH run: the fair pairing (issue 13).
 *
 *     redis_subscriber HOST PORT CHANNEL PAYLOAD_BYTES EXPECTED IDLE_MS
 *
 * redis-benchmark only publishes; msgbench's redis target also has the broker deliver every
 * message to a receiver on the same cores. This process is that receiver for the tool's
 * run, written as a Redis user writes one: hiredis, Redis's own C client (the library
 * redis-cli and redis-benchmark are built on), SUBSCRIBE, then one redisGetReply per
 * message, each push parsed into its reply object and looked at (a 3-element
 * "message" array on CHANNEL with a PAYLOAD_BYTES payload) before the next.
 *
 * It prints "subscribed" once Redis confirmed the SUBSCRIBE, and ends IDLE_MS without a
 * message after the first (200 ms once EXPECTED have arrived: redis-benchmark's last
 * pipelines may go a little past its -n), or when Redis closes the connection (a
 * subscriber past its output buffer limit). Then one JSON line: received (messages that
 * were as expected), mismatched (pushes that were not), first_ns and last_ns
 * (CLOCK_MONOTONIC when the first and the last message had been parsed).
 */
#include <hiredis/hiredis.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static int is_message(const redisReply *r, const char *channel, size_t channel_len, long long payload_bytes)
{
    return r->type == REDIS_REPLY_ARRAY && r->elements == 3 && r->element[0]->type == REDIS_REPLY_STRING &&
           r->element[0]->len == 7 && memcmp(r->element[0]->str, "message", 7) == 0 &&
           r->element[1]->type == REDIS_REPLY_STRING && (size_t)r->element[1]->len == channel_len &&
           memcmp(r->element[1]->str, channel, channel_len) == 0 && r->element[2]->type == REDIS_REPLY_STRING &&
           (long long)r->element[2]->len == payload_bytes;
}

int main(int argc, char **argv)
{
    if (argc != 7) {
        fprintf(stderr, "redis_subscriber HOST PORT CHANNEL PAYLOAD_BYTES EXPECTED IDLE_MS\n");
        return 2;
    }
    const char *host = argv[1], *channel = argv[3];
    const int port = atoi(argv[2]);
    const long long payload_bytes = atoll(argv[4]), expected = atoll(argv[5]), idle_ms = atoll(argv[6]);
    const size_t channel_len = strlen(channel);

    redisContext *c = redisConnect(host, port);
    if (c == NULL || c->err) {
        fprintf(stderr, "cannot connect to redis at %s:%d: %s\n", host, port, c ? c->errstr : "out of memory");
        return 1;
    }
    redisReply *reply = redisCommand(c, "SUBSCRIBE %s", channel);
    if (reply == NULL || reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) {
        fprintf(stderr, "unexpected reply to SUBSCRIBE %s: %s\n", channel, reply ? "not a subscribe array" : c->errstr);
        return 1;
    }
    freeReplyObject(reply);
    printf("subscribed\n");
    fflush(stdout);

    long long received = 0, mismatched = 0, first_ns = 0, last_ns = 0;
    const struct timeval idle = {.tv_sec = idle_ms / 1000, .tv_usec = (idle_ms % 1000) * 1000};
    /* redis-benchmark may publish a little past -n (its last pipelines are whole): after
     * EXPECTED, what is still on its way is taken within a shorter idle. */
    const long long tail_ms = idle_ms < 200 ? idle_ms : 200;
    const struct timeval tail = {.tv_sec = tail_ms / 1000, .tv_usec = (tail_ms % 1000) * 1000};
    for (;;) {
        if (received + mismatched == expected) {
            redisSetTimeout(c, tail);
        }
        void *got = NULL;
        if (redisGetReply(c, &got) != REDIS_OK || got == NULL) {
            /* idle past IDLE_MS after the first message, or Redis closed the connection */
            if (received + mismatched < expected) {
                fprintf(stderr, "redis_subscriber: ended after %lld of %lld messages: %s\n", received + mismatched,
                        expected, c->errstr);
            }
            break;
        }
        reply = got;
        if (is_message(reply, channel, channel_len, payload_bytes)) {
            received++;
        } else {
            mismatched++;
        }
        freeReplyObject(reply);
        last_ns = monotonic_ns();
        if (first_ns == 0) {
            first_ns = last_ns;
            redisSetTimeout(c, idle); /* from here on, the run's end is IDLE_MS without a message */
        }
    }
    redisFree(c);
    printf("{\"received\": %lld, \"mismatched\": %lld, \"first_ns\": %lld, \"last_ns\": %lld}\n", received, mismatched,
           first_ns, last_ns);
    return 0;
}
