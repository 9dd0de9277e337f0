/* json_value.c - jansson's parse with heapinject's rules; numbers read. */
#include "cli/util/json_value.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

/* true when v and everything under it lie within the nesting bound. */
static bool within_depth(const json_t *v, int depth)
{
    if (depth > CLI_JSON_VALUE_MAX_DEPTH)
        return false;
    const char *k;
    json_t *m;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, m)
            if (!within_depth(m, depth + 1))
                return false;
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, m)
            if (!within_depth(m, depth + 1))
                return false;
    }
    return true;
}

int cli_json_value_parse(const char *text, size_t len, json_t **out, char *why, size_t whylen)
{
    json_error_t jerr;
    /* Any value at the top (the readers say what they expected there);
     * a key twice in one object is an error, not "the last one wins". */
    json_t *tree = json_loadb(text, len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
    *out = NULL;
    if (!tree) {
        if (json_error_code(&jerr) == json_error_out_of_memory)
            return -ENOMEM;
        if (why && whylen)
            snprintf(why, whylen, "JSON line %d, column %d: %s", jerr.line, jerr.column, jerr.text);
        return -EBADMSG;
    }
    if (!within_depth(tree, 0)) {
        json_decref(tree);
        if (why && whylen)
            snprintf(why, whylen, "JSON nested deeper than %d levels", CLI_JSON_VALUE_MAX_DEPTH);
        return -EBADMSG;
    }
    *out = tree;
    return 0;
}

bool cli_json_value_u64(const json_t *n, uint64_t *out)
{
    if (json_is_integer(n)) {
        json_int_t i = json_integer_value(n);
        if (i < 0)
            return false;
        *out = (uint64_t)i;
        return true;
    }
    if (!json_is_real(n))
        return false;
    /* 1e3 or 1000.0: a whole number written another way */
    double f = json_real_value(n);
    if (!(f >= 0) || f >= 18446744073709551616.0 || f != floor(f))
        return false;
    *out = (uint64_t)f;
    return true;
}

bool cli_json_value_i64(const json_t *n, int64_t *out)
{
    if (!json_is_integer(n))
        return false;
    *out = (int64_t)json_integer_value(n);
    return true;
}

bool cli_json_value_double(const json_t *n, double *out)
{
    if (!json_is_number(n))
        return false;
    double f = json_number_value(n);
    if (!isfinite(f))
        return false;
    *out = f;
    return true;
}
