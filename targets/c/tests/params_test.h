/* What the params tests of every workload share (test_fanin.c, test_socket.c): decode
 * params given as JSON text, and check that params are rejected with a kind and a
 * message. */
#ifndef MSGBENCH_TEST_PARAMS_TEST_H
#define MSGBENCH_TEST_PARAMS_TEST_H

#include <stdbool.h>
#include <stddef.h>

#include "json.h"
#include "protocol.h"

/* A workload's params decoder (fanin_params_decode, socket_params_decode) behind a
 * void pointer: out is that workload's params struct. */
typedef bool (*params_decoder)(const json_value *params, void *out, error_kind *kind, char *message,
                               size_t message_size);

/* Decodes params given as JSON text into *out; returns 1 on success, else stores
 * kind/message (0 also when the text does not parse). */
int params_decode_text(params_decoder decode, const char *text, void *out, error_kind *kind, char *message,
                       size_t size);

/* True if params are rejected with this kind and a message containing expected; out
 * is scratch space for the decoder. */
int params_rejected(params_decoder decode, const char *text, void *out, error_kind expected_kind,
                    const char *expected);

#endif
