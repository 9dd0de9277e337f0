/* strtab.c - interned strings on the cli's one hash table. */
#include "cli/util/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct strtab_key {
    const struct cli_strtab *t;
    const char *s;
    size_t len;
};

static bool strtab_same(size_t entry, const void *ctx)
{
    const struct strtab_key *k = ctx;
    const char *c = k->t->strs[entry];
    return strlen(c) == k->len && !memcmp(c, k->s, k->len);
}

long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len)
{
    if (!s) {
        s = "";
        len = 0;
    }
    uint64_t h = cli_hash_bytes(s, len, 0);
    struct strtab_key key = { t, s, len };
    long found = cli_hindex_find(&t->index, h, strtab_same, &key);
    if (found >= 0)
        return found;
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->strs, nc * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        t->strs = ns;
        t->cap = nc;
    }
    char *copy = strndup(s, len);
    if (!copy)
        return -ENOMEM;
    if (cli_hindex_add(&t->index, h, t->n) < 0) {
        free(copy);
        return -ENOMEM;
    }
    t->strs[t->n] = copy;
    return (long)t->n++;
}

long cli_strtab_intern(struct cli_strtab *t, const char *s)
{
    return cli_strtab_intern_len(t, s, s ? strlen(s) : 0);
}

void cli_strtab_free(struct cli_strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        free(t->strs[i]);
    free(t->strs);
    cli_hindex_free(&t->index);
    memset(t, 0, sizeof(*t));
}
