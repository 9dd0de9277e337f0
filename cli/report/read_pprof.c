/* read_pprof.c - a gzipped pprof heap profile back into a
 * cli_profile: ours (cli/report/pprof.c), or any other with heap sample
 * types (Go's heap profiles have the same layout).
 *
 * Values: inuse_space/inuse_objects/alloc_space/alloc_objects, which pprof
 * files already hold unbiased; raw sample counts are not in the format and
 * stay 0 (the heap writer recovers them from the rate). Locations become
 * frames (one per Line, inlined first) with addr = address + 1, undoing the
 * writer's "return address - 1"; a location without lines becomes one
 * frame with no function, so a stack keeps all its levels. Mappings become
 * maps text. Totals and ticks come from our "#heapinject" comments.
 */
#include "cli/profile/read.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "cli/profile/merge.h"
#include "cli/report/profile.pb-c.h"
#include "cli/report/formats.h"
#include "cli/report/pprof_meta.h"

typedef Perftools__Profiles__Profile pb_profile;


/* Inflates gzip data into a malloc'ed buffer, refusing more than the
 * read limit (a small file can inflate to gigabytes). */
static int gunzip(const void *data, size_t len, uint8_t **out, size_t *outlen, char *why,
                  size_t whylen)
{
    z_stream zs;
    size_t cap = len * 4 + 4096, n = 0;
    uint8_t *buf;
    int zr, err = 0;

    if (len > UINT32_MAX)
        return cli_profile_read_bad(why, whylen, "gzip data too large");
    memset(&zs, 0, sizeof(zs));
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        return -ENOMEM;
    buf = malloc(cap);
    if (!buf) {
        inflateEnd(&zs);
        return -ENOMEM;
    }
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (uInt)len;
    do {
        if (n == cap) {
            if (cap >= CLI_PROFILE_READ_MAX_BYTES) {
                err = cli_profile_read_bad(why, whylen, "inflates to more than %u MiB",
                          CLI_PROFILE_READ_MAX_BYTES >> 20);
                break;
            }
            size_t nc = cap * 2 > CLI_PROFILE_READ_MAX_BYTES ? CLI_PROFILE_READ_MAX_BYTES : cap * 2;
            uint8_t *nb = realloc(buf, nc);
            if (!nb) {
                err = -ENOMEM;
                break;
            }
            buf = nb;
            cap = nc;
        }
        size_t room = cap - n > UINT32_MAX ? UINT32_MAX : cap - n;
        zs.next_out = buf + n;
        zs.avail_out = (uInt)room;
        zr = inflate(&zs, Z_NO_FLUSH);
        n += room - zs.avail_out;
        if (zr == Z_STREAM_END)
            break;
        if (zr == Z_BUF_ERROR && zs.avail_in == 0) {
            err = cli_profile_read_bad(why, whylen, "gzip data truncated");
            break;
        }
        if (zr != Z_OK && zr != Z_BUF_ERROR) {
            err = cli_profile_read_bad(why, whylen, "gzip data corrupt: %s", zs.msg ? zs.msg : "inflate failed");
            break;
        }
    } while (1);
    inflateEnd(&zs);
    if (err) {
        free(buf);
        return err;
    }
    *out = buf;
    *outlen = n;
    return 0;
}

struct pp_reader {
    const pb_profile *pb;
    struct cli_u64map mappings, functions, locations; /* id -> index */
    char *why;
    size_t whylen;
};

static bool str_ok(const pb_profile *pb, int64_t i)
{
    return i >= 0 && (uint64_t)i < pb->n_string_table;
}

static const char *str_at(const pb_profile *pb, int64_t i)
{
    return str_ok(pb, i) ? pb->string_table[i] : "";
}

/* Checks every string index and id, fills the id maps. */
static int validate(struct pp_reader *r)
{
    const pb_profile *pb = r->pb;
    char *why = r->why;
    size_t wl = r->whylen;

    if (!pb->n_string_table || pb->string_table[0][0])
        return cli_profile_read_bad(why, wl, "pprof string table does not start with \"\"");
    for (size_t i = 0; i < pb->n_sample_type; i++)
        if (!str_ok(pb, pb->sample_type[i]->type) || !str_ok(pb, pb->sample_type[i]->unit))
            return cli_profile_read_bad(why, wl, "sample type %zu names a string that does not exist", i);
    for (size_t i = 0; i < pb->n_comment; i++)
        if (!str_ok(pb, pb->comment[i]))
            return cli_profile_read_bad(why, wl, "comment %zu names a string that does not exist", i);
    if (pb->period_type && (!str_ok(pb, pb->period_type->type) || !str_ok(pb, pb->period_type->unit)))
        return cli_profile_read_bad(why, wl, "period type names a string that does not exist");
    for (size_t i = 0; i < pb->n_mapping; i++) {
        const Perftools__Profiles__Mapping *m = pb->mapping[i];
        uint64_t dummy;
        if (!m->id || !cli_u64map_get(&r->mappings, m->id, &dummy))
            return cli_profile_read_bad(why, wl, "mapping id %" PRIu64 " is zero or repeated", m->id);
        if (!str_ok(pb, m->filename) || !str_ok(pb, m->build_id))
            return cli_profile_read_bad(why, wl, "mapping %" PRIu64 " names a string that does not exist", m->id);
        if (cli_u64map_put(&r->mappings, m->id, i))
            return -ENOMEM;
    }
    for (size_t i = 0; i < pb->n_function; i++) {
        const Perftools__Profiles__Function *f = pb->function[i];
        uint64_t dummy;
        if (!f->id || !cli_u64map_get(&r->functions, f->id, &dummy))
            return cli_profile_read_bad(why, wl, "function id %" PRIu64 " is zero or repeated", f->id);
        if (!str_ok(pb, f->name) || !str_ok(pb, f->system_name) || !str_ok(pb, f->filename))
            return cli_profile_read_bad(why, wl, "function %" PRIu64 " names a string that does not exist", f->id);
        if (cli_u64map_put(&r->functions, f->id, i))
            return -ENOMEM;
    }
    for (size_t i = 0; i < pb->n_location; i++) {
        const Perftools__Profiles__Location *l = pb->location[i];
        uint64_t dummy;
        if (!l->id || !cli_u64map_get(&r->locations, l->id, &dummy))
            return cli_profile_read_bad(why, wl, "location id %" PRIu64 " is zero or repeated", l->id);
        if (l->mapping_id && cli_u64map_get(&r->mappings, l->mapping_id, &dummy))
            return cli_profile_read_bad(why, wl, "location %" PRIu64 " refers to mapping %" PRIu64 " that does not exist",
                       l->id, l->mapping_id);
        for (size_t k = 0; k < l->n_line; k++)
            if (cli_u64map_get(&r->functions, l->line[k]->function_id, &dummy))
                return cli_profile_read_bad(why, wl, "location %" PRIu64 " refers to function %" PRIu64
                                    " that does not exist", l->id, l->line[k]->function_id);
        if (cli_u64map_put(&r->locations, l->id, i))
            return -ENOMEM;
    }
    for (size_t i = 0; i < pb->n_sample; i++) {
        const Perftools__Profiles__Sample *s = pb->sample[i];
        uint64_t dummy;
        if (s->n_value != pb->n_sample_type)
            return cli_profile_read_bad(why, wl, "sample %zu has %zu values for %zu sample types", i, s->n_value,
                       pb->n_sample_type);
        for (size_t k = 0; k < s->n_location_id; k++)
            if (cli_u64map_get(&r->locations, s->location_id[k], &dummy))
                return cli_profile_read_bad(why, wl, "sample %zu refers to location %" PRIu64 " that does not exist",
                           i, s->location_id[k]);
        for (size_t k = 0; k < s->n_label; k++)
            if (!str_ok(pb, s->label[k]->key) || !str_ok(pb, s->label[k]->str) ||
                !str_ok(pb, s->label[k]->num_unit))
                return cli_profile_read_bad(why, wl, "sample %zu has a label naming a string that does not exist", i);
    }
    return 0;
}

static char *dup_or_null(const char *s)
{
    return s && s[0] ? strdup(s) : NULL;
}

/* Frames of one location appended to s->frames (capacity checked by the
 * caller). Returns 0 or -ENOMEM. */
static int add_location(struct pp_reader *r, struct cli_stack *s, uint64_t loc_index)
{
    const pb_profile *pb = r->pb;
    const Perftools__Profiles__Location *l = pb->location[loc_index];
    const Perftools__Profiles__Mapping *m = NULL;
    uint64_t mi;
    if (l->mapping_id && !cli_u64map_get(&r->mappings, l->mapping_id, &mi))
        m = pb->mapping[mi];
    uint64_t addr = l->address + 1;
    size_t nl = l->n_line ? l->n_line : 1;
    for (size_t k = 0; k < nl; k++) {
        struct cli_frame *f = &s->frames[s->nframes];
        memset(f, 0, sizeof(*f));
        f->addr = addr;
        f->inlined = k + 1 < nl;
        if (m) {
            /* Load base = start - file offset, as for an ELF segment. */
            f->module_offset = addr - (m->memory_start - m->file_offset);
            if (!(f->module = dup_or_null(str_at(pb, m->filename))) && str_at(pb, m->filename)[0])
                return -ENOMEM;
        }
        s->nframes++;
        if (!l->n_line)
            break;
        uint64_t fi;
        cli_u64map_get(&r->functions, l->line[k]->function_id, &fi);
        const Perftools__Profiles__Function *fn = pb->function[fi];
        const char *name = str_at(pb, fn->name);
        if (!name[0])
            name = str_at(pb, fn->system_name);
        f->function = dup_or_null(name);
        f->file = dup_or_null(str_at(pb, fn->filename));
        if ((name[0] && !f->function) || (str_at(pb, fn->filename)[0] && !f->file))
            return -ENOMEM;
        f->line = l->line[k]->line > 0 && l->line[k]->line <= INT32_MAX ? (int)l->line[k]->line : 0;
    }
    return 0;
}

static int find_type(const pb_profile *pb, const char *name)
{
    for (size_t i = 0; i < pb->n_sample_type; i++)
        if (!strcmp(str_at(pb, pb->sample_type[i]->type), name))
            return (int)i;
    return -1;
}

static double sample_value(const Perftools__Profiles__Sample *s, int idx)
{
    return idx >= 0 ? (double)s->value[idx] : 0;
}

static int build_stacks(struct pp_reader *r, struct cli_profile *p)
{
    const pb_profile *pb = r->pb;
    int ia_obj = find_type(pb, "alloc_objects"), ia_sp = find_type(pb, "alloc_space");
    int il_obj = find_type(pb, "inuse_objects"), il_sp = find_type(pb, "inuse_space");
    if (ia_sp < 0 && il_sp < 0)
        return cli_profile_read_bad(r->why, r->whylen, "a pprof profile, but not of the heap "
                                      "(no inuse_space or alloc_space sample type)");
    bool any_lines = false;
    for (size_t i = 0; i < pb->n_location; i++)
        any_lines |= pb->location[i]->n_line > 0;

    p->stacks = calloc(pb->n_sample ? pb->n_sample : 1, sizeof(*p->stacks));
    if (!p->stacks)
        return -ENOMEM;
    for (size_t i = 0; i < pb->n_sample; i++) {
        const Perftools__Profiles__Sample *ps = pb->sample[i];
        struct cli_stack *s = &p->stacks[p->nstacks++];
        if (ps->n_location_id > UINT32_MAX / 2)
            return cli_profile_read_bad(r->why, r->whylen, "sample %zu is too deep", i);
        s->live_bytes = sample_value(ps, il_sp);
        s->live_objects = sample_value(ps, il_obj);
        s->alloc_bytes = sample_value(ps, ia_sp);
        s->alloc_objects = sample_value(ps, ia_obj);
        for (size_t k = 0; k < ps->n_label; k++) { /* "kind", "pid" (report/pprof.c) */
            if (!strcmp(str_at(pb, ps->label[k]->key), "kind") && cli_profile_kind_by_name(str_at(pb, ps->label[k]->str)) > 0)
                s->kind = (uint32_t)cli_profile_kind_by_name(str_at(pb, ps->label[k]->str));
            if (!strcmp(str_at(pb, ps->label[k]->key), "pid") && ps->label[k]->num > 0 &&
                ps->label[k]->num <= INT32_MAX)
                s->pid = (int32_t)ps->label[k]->num;
        }
        for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
            s->growth[g] = -1;
        s->pcs = calloc(ps->n_location_id ? ps->n_location_id : 1, sizeof(*s->pcs));
        if (!s->pcs)
            return -ENOMEM;
        size_t nframes = 0;
        for (size_t k = 0; k < ps->n_location_id; k++) {
            uint64_t li;
            cli_u64map_get(&r->locations, ps->location_id[k], &li);
            s->pcs[s->npcs++] = pb->location[li]->address + 1;
            size_t nl = pb->location[li]->n_line;
            nframes += nl ? nl : 1;
            if (nframes > UINT32_MAX / 2)
                return cli_profile_read_bad(r->why, r->whylen, "sample %zu is too deep", i);
        }
        if (!any_lines || !ps->n_location_id)
            continue; /* addresses only: for the symbolizer */
        s->frames = calloc(nframes, sizeof(*s->frames));
        if (!s->frames)
            return -ENOMEM;
        for (size_t k = 0; k < ps->n_location_id; k++) {
            uint64_t li;
            cli_u64map_get(&r->locations, ps->location_id[k], &li);
            if (add_location(r, s, li))
                return -ENOMEM;
        }
    }
    return 0;
}

/* The processes of a profile of several, from the samples' "pid" and
 * "comm" labels (issue 28); none when every sample is of the profile's
 * own pid (or carries no pid). Their RSS and times are not in the file. */
static int processes_from_labels(const pb_profile *pb, struct cli_profile *p)
{
    bool several = false;
    for (size_t i = 0; i < p->nstacks && !several; i++)
        several = p->stacks[i].pid && p->stacks[i].pid != p->stacks[0].pid;
    if (!several)
        return 0;
    p->processes = calloc(p->nstacks, sizeof(*p->processes));
    if (!p->processes)
        return -ENOMEM;
    for (size_t i = 0; i < pb->n_sample && i < p->nstacks; i++) {
        int32_t pid = p->stacks[i].pid;
        if (!pid || cli_profile_process_find(p, pid))
            continue;
        struct cli_process *o = &p->processes[p->nprocesses++];
        o->pid = pid;
        o->attach_ms = -1;
        const Perftools__Profiles__Sample *ps = pb->sample[i];
        for (size_t k = 0; k < ps->n_label; k++)
            if (!strcmp(str_at(pb, ps->label[k]->key), "comm") && str_at(pb, ps->label[k]->str)[0] &&
                !(o->comm = strdup(str_at(pb, ps->label[k]->str))))
                return -ENOMEM;
    }
    return 0;
}

static int cmp_mapping(const void *a, const void *b)
{
    const Perftools__Profiles__Mapping *x = *(Perftools__Profiles__Mapping *const *)a;
    const Perftools__Profiles__Mapping *y = *(Perftools__Profiles__Mapping *const *)b;
    return x->memory_start < y->memory_start ? -1 : x->memory_start > y->memory_start;
}

/* Mappings as /proc/PID/maps lines, in address order. */
static int build_maps(const pb_profile *pb, struct cli_profile *p)
{
    struct cli_buf b = { 0 };
    Perftools__Profiles__Mapping **sorted = calloc(pb->n_mapping ? pb->n_mapping : 1, sizeof(*sorted));
    if (!sorted)
        return -ENOMEM;
    if (pb->n_mapping) /* pb->mapping is NULL when there is none */
        memcpy(sorted, pb->mapping, pb->n_mapping * sizeof(*sorted));
    qsort(sorted, pb->n_mapping, sizeof(*sorted), cmp_mapping);
    for (size_t i = 0; i < pb->n_mapping; i++) {
        const Perftools__Profiles__Mapping *m = sorted[i];
        const char *name = str_at(pb, m->filename);
        if (m->memory_limit <= m->memory_start)
            continue;
        /* A name with a newline would split the line: cut it there. */
        int nl = (int)strcspn(name, "\n");
        if (cli_buf_addf(&b, "%" PRIx64 "-%" PRIx64 " r-xp %08" PRIx64 " 00:00 0%s%.*s\n",
                         m->memory_start, m->memory_limit, m->file_offset,
                         nl ? "                          " : "", nl, name)) {
            free(sorted);
            free(b.data);
            return -ENOMEM;
        }
    }
    free(sorted);
    p->maps = b.data;
    p->maps_len = b.len;
    return 0;
}

int cli_profile_read_pprof(const void *data, size_t len, struct cli_profile *p, char *why,
                           size_t whylen)
{
    struct pp_reader r = { .why = why, .whylen = whylen };
    uint8_t *raw = NULL;
    size_t rawlen = 0;
    pb_profile *pb = NULL;
    int err;

    memset(p, 0, sizeof(*p));
    if ((err = gunzip(data, len, &raw, &rawlen, why, whylen)))
        return err;
    pb = perftools__profiles__profile__unpack(NULL, rawlen, raw);
    if (!pb) {
        err = cli_profile_read_bad(why, whylen, "gzip data is not a pprof protobuf message");
        goto out;
    }
    r.pb = pb;
    if ((err = validate(&r)) || (err = build_stacks(&r, p)) || (err = build_maps(pb, p)))
        goto out;
    if (pb->period_type && !strcmp(str_at(pb, pb->period_type->type), "space") && pb->period > 0)
        p->rate = (uint64_t)pb->period;
    if (pb->duration_nanos > 0)
        p->duration_s = (double)pb->duration_nanos / 1e9;
    bool have_totals = false;
    for (size_t i = 0; i < pb->n_comment; i++) {
        const char *c = str_at(pb, pb->comment[i]);
        int m = cli_pprof_meta_parse(c, p);
        if (m < 0) {
            err = m;
            goto out;
        }
        have_totals |= m == 1 && !strncmp(c, "#heapinject v", 13);
    }
    if ((err = processes_from_labels(pb, p)))
        goto out;
    if (!have_totals) {
        /* Foreign or older profile: totals are the sums of the samples. */
        for (size_t i = 0; i < p->nstacks; i++) {
            if (p->stacks[i].kind != HI_KIND_MALLOC)
                continue; /* the totals are the malloc family's */
            p->totals.est_live_bytes += (uint64_t)llround(fmax(p->stacks[i].live_bytes, 0));
            p->totals.est_live_objects += (uint64_t)llround(fmax(p->stacks[i].live_objects, 0));
            p->totals.est_alloc_bytes += (uint64_t)llround(fmax(p->stacks[i].alloc_bytes, 0));
            p->totals.est_alloc_objects += (uint64_t)llround(fmax(p->stacks[i].alloc_objects, 0));
        }
        p->totals.buckets = p->nstacks;
    }
out:
    if (pb)
        perftools__profiles__profile__free_unpacked(pb, NULL);
    free(raw);
    cli_u64map_free(&r.mappings);
    cli_u64map_free(&r.functions);
    cli_u64map_free(&r.locations);
    if (err)
        cli_profile_free(p);
    return err;
}
