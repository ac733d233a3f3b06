/* The histogram against the vectors every language is tested with (tests/test_histogram.py),
 * and its counts, merge and sparse pairs. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "histogram.h"
#include "protocol.h"

static void test_layout_vectors(void)
{
    static const int64_t vectors[][2] = {{0, 0},           {1, 1},         {127, 127},      {128, 128},
                                         {129, 128},       {255, 191},     {256, 192},      {1000, 317},
                                         {65535, 703},     {1000000, 954}, {1000000000, 1591},
                                         {INT64_C(1) << 40, 2240},         {INT64_C(1) << 62, 3648}};
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        CHECK(histogram_index(vectors[i][0]) == vectors[i][1]);
    }
    CHECK(histogram_index(-5) == 0);
    CHECK(histogram_index(INT64_MAX) / HISTOGRAM_CHUNK_BUCKETS == HISTOGRAM_CHUNKS - 1);
}

/* What a histogram writes as JSON; free() it. */
static char *json_of(const histogram *h)
{
    char *text = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&text, &length);
    histogram_write_json(out, h);
    fclose(out);
    return text;
}

static void test_counts_merge_and_pairs(void)
{
    histogram a = {0};
    histogram b = {0};
    char *text = json_of(&a);
    CHECK(strcmp(text, "[]") == 0 && a.count == 0 && a.max_ns == 0);
    free(text);
    CHECK(histogram_record(&a, 1000) && histogram_record(&a, 1003) && histogram_record(&a, -7));
    CHECK(histogram_record(&b, 1000000) && histogram_record(&b, INT64_MAX) && histogram_record(&b, 1007));
    text = json_of(&a);
    CHECK(strcmp(text, "[[0,1],[317,2]]") == 0 && a.count == 3 && a.max_ns == 1003); /* 1000..1007: one bucket */
    free(text);
    CHECK(histogram_merge(&a, &b));
    text = json_of(&a);
    CHECK(strcmp(text, "[[0,1],[317,3],[954,1],[3711,1]]") == 0);
    CHECK(a.count == 6 && a.max_ns == INT64_MAX);
    free(text);
    /* a result carries it under its name */
    char *line = NULL;
    size_t length = 0;
    FILE *out = open_memstream(&line, &length);
    verify_count verify[] = {{"received", 6}};
    named_histogram named[] = {{"latency_ns", &b}};
    protocol_result_with_histograms(out, NULL, 0, verify, 1, named, 1);
    fclose(out);
    CHECK(strcmp(line, "{\"type\":\"result\",\"measured\":{},\"verify\":{\"received\":6},"
                       "\"histograms\":{\"latency_ns\":[[317,1],[954,1],[3711,1]]}}\n") == 0);
    free(line);
    histogram_free(&a);
    histogram_free(&b);
    CHECK(a.count == 0 && a.chunks[4] == NULL);
}

void test_histogram(void)
{
    test_layout_vectors();
    test_counts_merge_and_pairs();
}
