/* strtab.c - a string table for a writer, on the cli's one interner. */
#include "cli/util/strtab.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/intern.h"

long cli_strtab_intern_len(struct cli_strtab *t, const char *s, size_t len)
{
    if (!s) {
        s = "";
        len = 0;
    }
    if (!t->pool && !(t->pool = cli_intern_new()))
        return -ENOMEM;
    /* Room first: once the pool has a string, it has its id for good. */
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        char **ns = realloc(t->strs, nc * sizeof(*ns));
        if (!ns)
            return -ENOMEM;
        t->strs = ns;
        t->cap = nc;
    }
    const char *str = cli_intern_strn(t->pool, s, len);
    if (!str)
        return -ENOMEM;
    /* The pool numbers its strings 0, 1, 2, ... as they come, and only
     * this table adds to it: an id below n is one of ours, else it is n. */
    uint32_t id = cli_intern_id(str);
    if (id < t->n)
        return (long)id;
    /* const dropped for pprof's string_table (char **), which is only read. */
    t->strs[t->n] = (char *)str;
    return (long)t->n++;
}

long cli_strtab_intern(struct cli_strtab *t, const char *s)
{
    return cli_strtab_intern_len(t, s, s ? strlen(s) : 0);
}

void cli_strtab_free(struct cli_strtab *t)
{
    cli_intern_unref(t->pool);
    free(t->strs);
    memset(t, 0, sizeof(*t));
}
