/* Latency histograms in the harness's layout (msgbench/core/histogram.py, spec/README.md):
 * a value v >= 0 (ns) below 128 is its own bucket; above, shift = bit_length(v) - 7 and
 * the bucket is shift * 64 + (v >> shift), 64 buckets per power of two (under 1.6 %
 * error). A worker only counts; the harness computes every percentile from the sparse
 * [bucket, count] pairs it reports. */
#ifndef MSGBENCH_HISTOGRAM_H
#define MSGBENCH_HISTOGRAM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Buckets come in chunks of 64 (bucket >> 6), allocated when a value first falls in one:
 * a histogram whose values span three octaves holds three chunks (1.5 KiB), not the
 * whole range (29 KiB). The largest int64 falls in chunk 57. */
#define HISTOGRAM_CHUNK_BUCKETS 64
#define HISTOGRAM_CHUNKS 58

typedef struct {
    uint64_t *chunks[HISTOGRAM_CHUNKS];
    uint64_t count;
    int64_t max_ns; /* exact; 0 when empty */
} histogram;

/* The bucket of value_ns (negative counts as 0). */
int64_t histogram_index(int64_t value_ns);

/* Counts one value. False when a chunk could not be allocated (the value is then lost:
 * the count no longer matches, which the harness's check catches). */
bool histogram_record(histogram *h, int64_t value_ns);

/* Adds every count of from into into. False when out of memory. */
bool histogram_merge(histogram *into, const histogram *from);

/* The sparse pairs as JSON, [[bucket,count],...] in bucket order, empty buckets left out. */
void histogram_write_json(FILE *out, const histogram *h);

/* Frees the chunks; the histogram is then empty. */
void histogram_free(histogram *h);

#endif
