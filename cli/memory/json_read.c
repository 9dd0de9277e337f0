/* json_read.c - the "memory" object of a saved JSON profile read back, so
 * that `heapinject report FILE` shows the RSS breakdown it was saved with.
 * Strict like the rest of the reader: a member of the wrong type is an
 * error (-EBADMSG with a reason), an absent one is 0. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/memory/report.h"

static int u64(const json_t *o, const char *k, uint64_t *out,
               char *why, size_t whylen)
{
    const json_t *n = json_object_get(o, k);
    if (!n || json_is_null(n))
        return 0;
    if (!cli_json_value_u64(n, out)) {
        snprintf(why, whylen, "memory: \"%s\" is not a non-negative integer", k);
        return -EBADMSG;
    }
    return 0;
}

static uint32_t allocator_kind(const char *name)
{
    static const char *const names[] = { "unknown", "glibc", "jemalloc", "tcmalloc", "mimalloc" };
    for (uint32_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
        if (!strcmp(name, names[i]))
            return i;
    return HI_ALLOC_UNKNOWN;
}

static const struct { const char *key; size_t off; uint32_t bit; } fields[] = {
    { "in_use_bytes", offsetof(struct hi_alloc_stats, in_use), HI_AF_IN_USE },
    { "free_bytes", offsetof(struct hi_alloc_stats, free), HI_AF_FREE },
    { "releasable_bytes", offsetof(struct hi_alloc_stats, releasable), HI_AF_RELEASABLE },
    { "mmapped_bytes", offsetof(struct hi_alloc_stats, mmapped), HI_AF_MMAPPED },
    { "mapped_bytes", offsetof(struct hi_alloc_stats, mapped), HI_AF_MAPPED },
    { "resident_bytes", offsetof(struct hi_alloc_stats, resident), HI_AF_RESIDENT },
    { "active_bytes", offsetof(struct hi_alloc_stats, active), HI_AF_ACTIVE },
    { "retained_bytes", offsetof(struct hi_alloc_stats, retained), HI_AF_RETAINED },
    { "metadata_bytes", offsetof(struct hi_alloc_stats, metadata), HI_AF_METADATA },
    { "unmapped_bytes", offsetof(struct hi_alloc_stats, unmapped), HI_AF_UNMAPPED },
    { "cache_free_bytes", offsetof(struct hi_alloc_stats, caches), HI_AF_CACHES },
    { "read_ns", offsetof(struct hi_alloc_stats, read_ns), 0 },
};

static int read_allocator(const json_t *a, struct cli_memory *m,
                          char *why, size_t whylen)
{
    if (!a || json_is_null(a))
        return 0;
    if (!json_is_object(a)) {
        snprintf(why, whylen, "memory: \"allocator\" is not an object");
        return -EBADMSG;
    }
    const json_t *r = json_object_get(a, "readable");
    const char *w = json_string_value(json_object_get(a, "why"));
    /* "no profiler attached" is how the writer says there were no figures. */
    if (r && json_is_boolean(r) && !json_is_true(r) && w && !strcmp(w, "no profiler attached"))
        return 0;
    struct hi_alloc_stats *s = &m->alloc;
    m->have_alloc = true;
    s->allocator = allocator_kind(json_string_value(json_object_get(a, "name")));
    const char *mod = json_string_value(json_object_get(a, "module"));
    snprintf(m->alloc_module, sizeof(m->alloc_module), "%s", mod ? mod : "");
    if (r && json_is_boolean(r) && !json_is_true(r)) {
        s->status = -ENOTSUP;
        snprintf(s->why, sizeof(s->why), "%s", w ? w : "");
        return 0;
    }
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (!json_object_get(a, fields[i].key))
            continue;
        /* memcpy: hi_alloc_stats is packed, its fields may be unaligned here. */
        uint64_t v = 0;
        int err = u64(a, fields[i].key, &v, why, whylen);
        if (err)
            return err;
        memcpy((char *)s + fields[i].off, &v, sizeof(v));
        s->fields |= fields[i].bit;
    }
    uint64_t arenas = 0;
    int err = u64(a, "arenas", &arenas, why, whylen);
    if (err)
        return err;
    s->arenas = (uint32_t)arenas;
    m->glibc_arenas = (unsigned)arenas;
    if (json_object_get(a, "arenas"))
        s->fields |= HI_AF_ARENAS;
    return 0;
}

int cli_memory_from_json(const json_t *o, struct cli_memory **out,
                         char *why, size_t whylen)
{
    *out = NULL;
    if (!o || json_is_null(o))
        return 0;
    if (!json_is_object(o)) {
        snprintf(why, whylen, "\"memory\" is not an object");
        return -EBADMSG;
    }
    struct cli_memory *m = calloc(1, sizeof(*m));
    if (!m)
        return -ENOMEM;
    int err = 0;
    const json_t *parts = json_object_get(o, "parts");
    const json_t *top = json_object_get(o, "files_top");
    const json_t *notes = json_object_get(o, "notes");
    const char *src = json_string_value(json_object_get(o, "source"));
    double ms = 0;
    if (!parts || !json_is_object(parts)) {
        snprintf(why, whylen, "memory: no \"parts\" object");
        err = -EBADMSG;
        goto out;
    }
    if ((err = u64(o, "rss_bytes", &m->rss, why, whylen)) ||
        (err = u64(o, "heap_smaps_rss", &m->heap_smaps_rss, why, whylen)) ||
        (err = u64(o, "heap_mmapped_rss", &m->heap_mmapped_rss, why, whylen)) ||
        (err = u64(o, "untouched_bytes", &m->untouched, why, whylen)) ||
        (err = u64(o, "mmap_dontfork_bytes", &m->mmap_dontfork, why, whylen)))
        goto out;
    for (int i = 0; i < CLI_MEM_NPARTS; i++)
        if ((err = u64(parts, cli_memory_part_key(i), &m->parts[i], why, whylen)))
            goto out;
    if (src)
        sscanf(src, "/proc/%d/smaps", &m->pid);
    if (cli_json_value_double(json_object_get(o, "read_ms"), &ms))
        m->read_ms = ms;
    /* json_array_size() and json_array_get() are 0 and NULL for a
     * member that is absent or not an array: nothing to read */
    for (size_t at = 0; at < json_array_size(top) && m->ntop < CLI_MEM_TOP_MODULES; at++) {
        const json_t *t = json_array_get(top, at);
        const char *p = json_string_value(json_object_get(t, "module"));
        if (!p || (err = u64(t, "rss_bytes", &m->top[m->ntop].rss, why, whylen)))
            goto out;
        snprintf(m->top[m->ntop].path, sizeof(m->top[0].path), "%s", p);
        m->ntop++;
    }
    uint64_t nmod = m->ntop;
    if ((err = u64(o, "modules", &nmod, why, whylen)))
        goto out;
    m->nmodules = nmod < m->ntop ? m->ntop : (size_t)nmod;
    if ((err = read_allocator(json_object_get(o, "allocator"), m, why, whylen)))
        goto out;
    for (size_t at = 0; at < json_array_size(notes); at++) {
        const char *s = json_string_value(json_array_get(notes, at));
        if (s)
            cli_memory_note(m, "%s", s);
    }
    m->valid = true;
out:
    if (err) {
        cli_memory_destroy(m);
        return err;
    }
    *out = m;
    return 0;
}
