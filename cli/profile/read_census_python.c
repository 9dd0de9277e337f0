/* read_census_python.c - a census's "python" object (docs/JSON.md) read
 * back, so that `heapinject report FILE` writes the Python section again. */
#include "cli/profile/read_census_python.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/profile/read.h"

#define MAX_PY_ROWS (1u << 16)

static int u64_of(const json_t *o, const char *k, uint64_t *out,
                  char *why, size_t whylen)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_u64(n, out))
        return cli_profile_read_bad(why, whylen, "census python: \"%s\" is not a non-negative integer", k);
    return 0;
}

static int u32_of(const json_t *o, const char *k, uint32_t *out,
                  char *why, size_t whylen)
{
    uint64_t v = *out;
    int err = u64_of(o, k, &v, why, whylen);
    if (!err && v > UINT32_MAX)
        return cli_profile_read_bad(why, whylen, "census python: \"%s\" is out of range", k);
    *out = (uint32_t)v;
    return err;
}

static int is_true(const json_t *o, const char *k)
{
    const json_t *n = json_object_get(o, k);
    return n && json_is_boolean(n) && json_is_true(n);
}

int cli_census_python_from_json(const json_t *py, struct cli_census *c,
                                char *why, size_t whylen)
{
    if (!py || json_is_null(py))
        return 0;
    if (!json_is_object(py))
        return cli_profile_read_bad(why, whylen, "census: \"python\" is not an object");
    struct hi_census_python s;
    memset(&s, 0, sizeof(s));
    unsigned major = 0, minor = 0, micro = 0;
    const char *v = json_string_value(json_object_get(py, "version"));
    int nv = v ? sscanf(v, "%u.%u.%u", &major, &minor, &micro) : 0;
    if (nv >= 2)
        s.version = (major & 0xff) << 24 | (minor & 0xff) << 16 | (micro & 0xff) << 8;
    s.version_exact = nv == 3 && is_true(py, "version_exact");
    s.status = is_true(py, "counted") ? 0 : -ENOTSUP;
    const char *w = json_string_value(json_object_get(py, s.status < 0 ? "why" : "not_seen"));
    snprintf(s.why, sizeof(s.why), "%s", w ? w : "");
    uint64_t total = 0;
    int err;
    if ((err = u32_of(py, "pools", &s.pools, why, whylen)) ||
        (err = u32_of(py, "pools_skipped", &s.pools_skipped, why, whylen)) ||
        (err = u64_of(py, "pool_used_blocks", &s.pool_used_blocks, why, whylen)) ||
        (err = u64_of(py, "pool_used_bytes", &s.pool_used_bytes, why, whylen)) ||
        (err = u64_of(py, "pool_objects", &s.pool_objects, why, whylen)) ||
        (err = u64_of(py, "pool_object_bytes", &s.pool_object_bytes, why, whylen)) ||
        (err = u64_of(py, "malloc_objects", &s.malloc_objects, why, whylen)) ||
        (err = u64_of(py, "malloc_object_bytes", &s.malloc_object_bytes, why, whylen)) ||
        (err = u32_of(py, "types_dropped", &s.types_dropped, why, whylen)) ||
        (err = u64_of(py, "types_total", &total, why, whylen)))
        return err;
    if ((err = cli_census_set_python(c, &s)) < 0)
        return cli_profile_read_bad(why, whylen, "census: two \"python\" objects");
    const json_t *arr = json_object_get(py, "types");
    if (arr && !json_is_array(arr))
        return cli_profile_read_bad(why, whylen, "census python: \"types\" is not an array");
    if (arr && json_array_size(arr) > MAX_PY_ROWS)
        return cli_profile_read_bad(why, whylen, "census python: more than %u types", MAX_PY_ROWS);
    size_t x_at;
    const json_t *x;
    json_array_foreach(arr, x_at, x) {
        struct hi_census_pytype t;
        memset(&t, 0, sizeof(t));
        const char *name = json_string_value(json_object_get(x, "type"));
        if (!name)
            return cli_profile_read_bad(why, whylen, "census python: a type without its \"type\" name");
        snprintf(t.name, sizeof(t.name), "%s", name);
        if ((err = u64_of(x, "objects", &t.objects, why, whylen)) ||
            (err = u64_of(x, "bytes", &t.bytes, why, whylen)))
            return err;
        if ((err = cli_census_add_pytype(c, &t)) < 0)
            return err == -ENOMEM ? err : cli_profile_read_bad(why, whylen, "census python: too many types");
    }
    c->py_types_total = total;
    return 0;
}
