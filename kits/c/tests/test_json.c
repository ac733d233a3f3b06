#include <string.h>

#include "suites.h"
#include "json.h"

static json_value *parse(const char *text)
{
    char error[256];
    return json_parse(text, strlen(text), error, sizeof error);
}

static int rejects(const char *text)
{
    char error[256] = "";
    json_value *v = json_parse(text, strlen(text), error, sizeof error);
    int rejected = v == NULL && strstr(error, "invalid JSON at byte") != NULL;
    json_free(v);
    return rejected;
}

static void test_scalars(void)
{
    json_value *v = parse(" true ");
    CHECK(v != NULL && v->type == JSON_BOOL && v->as.boolean);
    json_free(v);
    v = parse("false");
    CHECK(v != NULL && v->type == JSON_BOOL && !v->as.boolean);
    json_free(v);
    v = parse("null");
    CHECK(v != NULL && v->type == JSON_NULL);
    json_free(v);

    v = parse("-42");
    CHECK(v != NULL && v->type == JSON_NUMBER && v->as.number.is_integer && v->as.number.integer == -42);
    json_free(v);
    v = parse("2.5e3");
    CHECK(v != NULL && v->type == JSON_NUMBER && !v->as.number.is_integer && v->as.number.value == 2500.0);
    json_free(v);
    v = parse("0.125");
    CHECK(v != NULL && v->as.number.value == 0.125);
    json_free(v);
    v = parse("123456789012345678901234567890"); /* too big for long long: still a number */
    CHECK(v != NULL && v->type == JSON_NUMBER && !v->as.number.is_integer && v->as.number.value > 1e29);
    json_free(v);
}

static void test_integers(void)
{
    long long n = 0;
    json_value *v = parse("7");
    CHECK(json_as_integer(v, &n) && n == 7);
    json_free(v);
    v = parse("7.0");
    CHECK(json_as_integer(v, &n) && n == 7);
    json_free(v);
    v = parse("1e3");
    CHECK(json_as_integer(v, &n) && n == 1000);
    json_free(v);
    v = parse("1.5");
    CHECK(!json_as_integer(v, &n));
    json_free(v);
    v = parse("1e30");
    CHECK(!json_as_integer(v, &n));
    json_free(v);
    v = parse("\"7\"");
    CHECK(!json_as_integer(v, &n));
    json_free(v);
    CHECK(!json_as_integer(NULL, &n));
}

static void test_strings(void)
{
    json_value *v = parse("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"");
    CHECK(v != NULL && v->type == JSON_STRING && strcmp(v->as.string.chars, "a\"b\\c/d\b\f\n\r\t") == 0);
    json_free(v);

    v = parse("\"\\u00e9\\u20AC\"");
    CHECK(v != NULL && strcmp(v->as.string.chars, "\xC3\xA9\xE2\x82\xAC") == 0);
    json_free(v);

    v = parse("\"\\ud83d\\ude00\""); /* surrogate pair: U+1F600 */
    CHECK(v != NULL && strcmp(v->as.string.chars, "\xF0\x9F\x98\x80") == 0);
    json_free(v);

    v = parse("\"caf\xC3\xA9\""); /* raw UTF-8 passes through */
    CHECK(v != NULL && strcmp(v->as.string.chars, "caf\xC3\xA9") == 0 && v->as.string.length == 5);
    json_free(v);

    v = parse("\"a\\u0000b\""); /* embedded NUL: the length is authoritative */
    CHECK(v != NULL && v->as.string.length == 3 && v->as.string.chars[1] == '\0');
    json_free(v);
}

static void test_containers(void)
{
    json_value *v = parse("{\"a\": [1, 2, {\"b\": []}], \"c\": {}, \"d\": \"x\"}");
    CHECK(v != NULL && v->type == JSON_OBJECT && v->as.object.count == 3);
    const json_value *a = json_object_get(v, "a");
    CHECK(a != NULL && a->type == JSON_ARRAY && a->as.array.count == 3);
    CHECK(a != NULL && a->as.array.items[2]->type == JSON_OBJECT);
    const json_value *b = a != NULL ? json_object_get(a->as.array.items[2], "b") : NULL;
    CHECK(b != NULL && b->type == JSON_ARRAY && b->as.array.count == 0);
    CHECK(json_object_get(v, "missing") == NULL);
    CHECK(json_object_get(a, "a") == NULL); /* not an object */
    json_free(v);

    v = parse("[]");
    CHECK(v != NULL && v->type == JSON_ARRAY && v->as.array.count == 0);
    json_free(v);
}

static void test_rejections(void)
{
    CHECK(rejects(""));
    CHECK(rejects("   "));
    CHECK(rejects("[1,]"));
    CHECK(rejects("{\"a\":1,}"));
    CHECK(rejects("{\"a\" 1}"));
    CHECK(rejects("{a:1}"));
    CHECK(rejects("[1 2]"));
    CHECK(rejects("01"));
    CHECK(rejects("1."));
    CHECK(rejects("-"));
    CHECK(rejects("1e"));
    CHECK(rejects("+1"));
    CHECK(rejects(".5"));
    CHECK(rejects("1e400"));
    CHECK(rejects("tru"));
    CHECK(rejects("nul"));
    CHECK(rejects("\"abc"));
    CHECK(rejects("\"a\tb\""));       /* raw control character */
    CHECK(rejects("\"\\x\""));        /* unknown escape */
    CHECK(rejects("\"\\u12\""));      /* short \u */
    CHECK(rejects("\"\\ud83d\""));    /* lone high surrogate */
    CHECK(rejects("\"\\ude00\""));    /* lone low surrogate */
    CHECK(rejects("{} x"));           /* trailing text */
    CHECK(rejects("[] []"));

    char deep[2 * JSON_MAX_DEPTH + 10];
    size_t n = JSON_MAX_DEPTH + 1;
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    CHECK(rejects(deep));
    n = JSON_MAX_DEPTH;
    memset(deep, '[', n);
    memset(deep + n, ']', n);
    deep[2 * n] = '\0';
    json_value *v = parse(deep);
    CHECK(v != NULL);
    json_free(v);

    char error[128];
    v = json_parse("[1, x]", 6, error, sizeof error);
    CHECK(v == NULL && strstr(error, "byte 4") != NULL);
    /* the length bounds the input: text after it is not read */
    v = json_parse("[1]garbage", 3, error, sizeof error);
    CHECK(v != NULL && v->type == JSON_ARRAY);
    json_free(v);
}

void test_json(void)
{
    test_scalars();
    test_integers();
    test_strings();
    test_containers();
    test_rejections();
}
