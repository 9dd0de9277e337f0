/* intern.c - the interned string pool (see intern.h).
 *
 * Strings live in large blocks, each string as [uint32 length][uint32 id]
 * [bytes][NUL]; a string longer than a block gets a block of its own. The
 * id -> string array and cli_hindex (hash -> id) find a string again. */
#include "cli/util/intern.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/hindex.h"

#define INTERN_BLOCK (64u * 1024u)
#define INTERN_SEED 0x9e3779b97f4a7c15ull

struct intern_block {
    struct intern_block *next;
    size_t used, size;
    char data[];
};

struct cli_intern {
    unsigned refs;
    struct intern_block *blocks;  /* newest first: strings are added to it */
    const char **strs;            /* id -> the string's bytes */
    size_t n, cap;
    struct cli_hindex index;      /* hash of the bytes -> id */
};

struct cli_intern *cli_intern_new(void)
{
    struct cli_intern *t = calloc(1, sizeof(*t));
    if (!t) {
        errno = ENOMEM;
        return NULL;
    }
    t->refs = 1;
    return t;
}

struct probe {
    const struct cli_intern *t;
    const char *s;
    size_t len;
};

static uint32_t stored_len(const char *s)
{
    uint32_t len;
    memcpy(&len, s - 2 * sizeof(uint32_t), sizeof(len));
    return len;
}

static bool same(size_t entry, const void *ctx)
{
    const struct probe *p = ctx;
    const char *s = p->t->strs[entry];
    return stored_len(s) == p->len && !memcmp(s, p->s, p->len);
}

/* Room for need bytes in a block (a new one when the newest is full). */
static char *take(struct cli_intern *t, size_t need)
{
    struct intern_block *b = t->blocks;
    if (!b || b->size - b->used < need) {
        size_t size = need > INTERN_BLOCK / 4 ? need : INTERN_BLOCK;
        if (!(b = malloc(sizeof(*b) + size)))
            return NULL;
        b->used = 0;
        b->size = size;
        if (size == INTERN_BLOCK || !t->blocks) {
            b->next = t->blocks;
            t->blocks = b;
        } else { /* an oversized string: keep filling the current block */
            b->next = t->blocks->next;
            t->blocks->next = b;
        }
    }
    char *at = b->data + b->used;
    b->used += (need + 7) & ~(size_t)7; /* keep headers aligned */
    if (b->used > b->size)
        b->used = b->size;
    return at;
}

const char *cli_intern_strn(struct cli_intern *t, const char *s, size_t len)
{
    if (len > UINT32_MAX - 16) {
        errno = EOVERFLOW;
        return NULL;
    }
    uint64_t h = cli_hindex_hash_bytes(s, len, INTERN_SEED);
    struct probe p = { t, s, len };
    long found = cli_hindex_find(&t->index, h, same, &p);
    if (found >= 0)
        return t->strs[found];
    if (t->n >= UINT32_MAX) {
        errno = EOVERFLOW;
        return NULL;
    }
    if (t->n == t->cap) {
        size_t nc = t->cap ? t->cap * 2 : 256;
        const char **ns = realloc(t->strs, nc * sizeof(*ns));
        if (!ns) {
            errno = ENOMEM;
            return NULL;
        }
        t->strs = ns;
        t->cap = nc;
    }
    char *at = take(t, 2 * sizeof(uint32_t) + len + 1);
    if (!at) {
        errno = ENOMEM;
        return NULL;
    }
    uint32_t l32 = (uint32_t)len, id = (uint32_t)t->n;
    memcpy(at, &l32, sizeof(l32));
    memcpy(at + sizeof(l32), &id, sizeof(id));
    char *str = at + 2 * sizeof(uint32_t);
    memcpy(str, s, len);
    str[len] = '\0';
    if (cli_hindex_add(&t->index, h, t->n) < 0) {
        errno = ENOMEM; /* the bytes stay in the block, unreachable: harmless */
        return NULL;
    }
    t->strs[t->n++] = str;
    return str;
}

const char *cli_intern_str(struct cli_intern *t, const char *s)
{
    if (!s) {
        errno = 0;
        return NULL;
    }
    return cli_intern_strn(t, s, strlen(s));
}

size_t cli_intern_count(const struct cli_intern *t)
{
    return t->n;
}

struct cli_intern *cli_intern_ref(struct cli_intern *t)
{
    if (t)
        t->refs++;
    return t;
}

void cli_intern_unref(struct cli_intern *t)
{
    if (!t || --t->refs > 0)
        return;
    for (struct intern_block *b = t->blocks, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    free(t->strs);
    cli_hindex_free(&t->index);
    free(t);
}
