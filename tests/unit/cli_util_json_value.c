/* cli_util_json_value.c - the parse with heapinject's rules (duplicate
 * keys, the nesting bound) and the numbers as the readers take them. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/util/json_value.h"

static int parse(const char *text, json_t **out, char *why, size_t whylen)
{
    return cli_json_value_parse(text, strlen(text), out, why, whylen);
}

/* depth arrays nested: "[[...[]...]]"; the innermost is at depth - 1. */
static int parse_nested(int depth, char *why, size_t whylen)
{
    char text[512];
    int n = 0;
    for (int i = 0; i < depth; i++)
        text[n++] = '[';
    for (int i = 0; i < depth; i++)
        text[n++] = ']';
    json_t *v;
    int rc = cli_json_value_parse(text, (size_t)n, &v, why, whylen);
    json_decref(v);
    return rc;
}

Test(cli_json_value, the_bound_is_on_depth_not_on_size)
{
    char why[128] = "";
    cr_expect_eq(parse_nested(CLI_JSON_VALUE_MAX_DEPTH + 1, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(parse_nested(CLI_JSON_VALUE_MAX_DEPTH + 2, why, sizeof(why)), -EBADMSG);
    cr_expect(strstr(why, "nested deeper than 64 levels"), "%s", why);
}

Test(cli_json_value, a_key_twice_and_bad_text_are_refused_with_where)
{
    char why[128] = "";
    json_t *v = (json_t *)1;
    cr_expect_eq(parse("{\"a\": 1, \"a\": 2}", &v, why, sizeof(why)), -EBADMSG);
    cr_expect_null(v);
    cr_expect(strstr(why, "JSON line 1"), "%s", why);
    cr_expect_eq(parse("{\"a\": 1}\n{", &v, why, sizeof(why)), -EBADMSG);
    cr_expect(strstr(why, "JSON line 2"), "%s", why);
}

Test(cli_json_value, numbers_as_the_readers_take_them)
{
    char why[128] = "";
    json_t *v;
    cr_assert_eq(parse("[7, -1, 1e3, 1.5, 1e20, \"7\", null, 9223372036854775807]", &v, why, sizeof(why)), 0,
                 "%s", why);
    uint64_t u = 0;
    int64_t i = 0;
    double d = 0;
    cr_expect(cli_json_value_u64(json_array_get(v, 0), &u) && u == 7);
    cr_expect(!cli_json_value_u64(json_array_get(v, 1), &u));         /* negative */
    cr_expect(cli_json_value_u64(json_array_get(v, 2), &u) && u == 1000); /* a whole real */
    cr_expect(!cli_json_value_u64(json_array_get(v, 3), &u));         /* a fraction */
    cr_expect(!cli_json_value_u64(json_array_get(v, 4), &u));         /* beyond 64 bits */
    cr_expect(!cli_json_value_u64(json_array_get(v, 5), &u));         /* a string */
    cr_expect(!cli_json_value_u64(json_array_get(v, 6), &u));         /* null */
    cr_expect(!cli_json_value_u64(NULL, &u));                         /* absent */
    cr_expect(cli_json_value_i64(json_array_get(v, 1), &i) && i == -1);
    cr_expect(!cli_json_value_i64(json_array_get(v, 2), &i));         /* a real is no integer */
    cr_expect(cli_json_value_i64(json_array_get(v, 7), &i) && i == INT64_MAX);
    cr_expect(cli_json_value_double(json_array_get(v, 3), &d) && d == 1.5);
    cr_expect(cli_json_value_double(json_array_get(v, 0), &d) && d == 7);
    cr_expect(!cli_json_value_double(json_array_get(v, 5), &d));
    json_decref(v);
    cr_expect_eq(parse("18446744073709551616", &v, why, sizeof(why)), -EBADMSG); /* jansson: too big */
}
