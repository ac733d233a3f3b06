#include "histogram.h"

#include <inttypes.h>
#include <stdlib.h>

#define EXACT_BELOW 128

int64_t histogram_index(int64_t value_ns)
{
    if (value_ns < EXACT_BELOW) {
        return value_ns < 0 ? 0 : value_ns;
    }
    int bit_length = 64 - __builtin_clzll((unsigned long long)value_ns);
    int shift = bit_length - 7;
    return (int64_t)shift * HISTOGRAM_CHUNK_BUCKETS + (value_ns >> shift);
}

/* The bucket's chunk, allocated (zeroed) on first use; NULL when out of memory. */
static uint64_t *chunk_of(histogram *h, int64_t bucket)
{
    uint64_t **chunk = &h->chunks[bucket / HISTOGRAM_CHUNK_BUCKETS];
    if (*chunk == NULL) {
        *chunk = calloc(HISTOGRAM_CHUNK_BUCKETS, sizeof **chunk);
    }
    return *chunk;
}

bool histogram_record(histogram *h, int64_t value_ns)
{
    int64_t bucket = histogram_index(value_ns);
    uint64_t *chunk = chunk_of(h, bucket);
    if (chunk == NULL) {
        return false;
    }
    chunk[bucket % HISTOGRAM_CHUNK_BUCKETS]++;
    h->count++;
    h->max_ns = value_ns > h->max_ns ? value_ns : h->max_ns;
    return true;
}

bool histogram_merge(histogram *into, const histogram *from)
{
    for (int c = 0; c < HISTOGRAM_CHUNKS; c++) {
        if (from->chunks[c] == NULL) {
            continue;
        }
        uint64_t *chunk = chunk_of(into, (int64_t)c * HISTOGRAM_CHUNK_BUCKETS);
        if (chunk == NULL) {
            return false;
        }
        for (int b = 0; b < HISTOGRAM_CHUNK_BUCKETS; b++) {
            chunk[b] += from->chunks[c][b];
        }
    }
    into->count += from->count;
    into->max_ns = from->max_ns > into->max_ns ? from->max_ns : into->max_ns;
    return true;
}

void histogram_write_json(FILE *out, const histogram *h)
{
    const char *separator = "";
    fputc('[', out);
    for (int c = 0; c < HISTOGRAM_CHUNKS; c++) {
        for (int b = 0; h->chunks[c] != NULL && b < HISTOGRAM_CHUNK_BUCKETS; b++) {
            if (h->chunks[c][b] > 0) {
                fprintf(out, "%s[%d,%" PRIu64 "]", separator, c * HISTOGRAM_CHUNK_BUCKETS + b, h->chunks[c][b]);
                separator = ",";
            }
        }
    }
    fputc(']', out);
}

void histogram_free(histogram *h)
{
    for (int c = 0; c < HISTOGRAM_CHUNKS; c++) {
        free(h->chunks[c]);
    }
    *h = (histogram){0};
}
