#include "socket_payload.h"

#include <stdint.h>
#include <string.h>

/* 32 bytes as one GCC/Clang vector: an AVX2 register in the AVX2 build below, two SSE2
 * halves in the baseline x86-64 one, what the target has elsewhere. */
typedef uint8_t bytes32 __attribute__((vector_size(32)));

#define BLOCK_BYTES (4 * sizeof(bytes32))

/* The differences from value are ORed into four independent accumulators (so the loop
 * is not one long dependency chain) and tested once at the end: no branch per block.
 * Inlined into each build below, so each gets its own instruction set. */
static inline __attribute__((always_inline)) bool all_bytes_are(const unsigned char *p, size_t n, unsigned char value)
{
    bytes32 pattern;
    memset(&pattern, value, sizeof pattern);
    bytes32 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    size_t i = 0;
    for (; i + BLOCK_BYTES <= n; i += BLOCK_BYTES) {
        bytes32 v0, v1, v2, v3;
        memcpy(&v0, p + i, sizeof v0); /* unaligned loads: the payload follows a 4-byte header */
        memcpy(&v1, p + i + sizeof v0, sizeof v1);
        memcpy(&v2, p + i + 2 * sizeof v0, sizeof v2);
        memcpy(&v3, p + i + 3 * sizeof v0, sizeof v3);
        a0 |= v0 ^ pattern;
        a1 |= v1 ^ pattern;
        a2 |= v2 ^ pattern;
        a3 |= v3 ^ pattern;
    }
    bytes32 any = a0 | a1 | a2 | a3;
    uint8_t differs = 0;
    for (size_t k = 0; k < sizeof any; k++) {
        differs |= any[k];
    }
    for (; i < n; i++) {
        differs |= (uint8_t)(p[i] ^ value);
    }
    return differs == 0;
}

#if defined(__x86_64__)
/* x86-64's baseline has SSE2 only; the AVX2 build is chosen at run time where the CPU has
 * it (a flag libgcc or compiler-rt read once at start-up). By hand, not target_clones:
 * Clang 14 (the c@clang14 build, docs/builds.md) does not export a target_clones function
 * to other files. */
__attribute__((target("avx2"))) static bool all_bytes_are_avx2(const unsigned char *p, size_t n, unsigned char value)
{
    return all_bytes_are(p, n, value);
}

bool payload_is_all(const unsigned char *p, size_t n, unsigned char value)
{
    return __builtin_cpu_supports("avx2") ? all_bytes_are_avx2(p, n, value) : all_bytes_are(p, n, value);
}
#else
bool payload_is_all(const unsigned char *p, size_t n, unsigned char value)
{
    return all_bytes_are(p, n, value);
}
#endif
