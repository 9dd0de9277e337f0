/* pprof.c - pprof output: profile.proto (cli/report/profile.proto) packed
 * with protobuf-c and gzipped with zlib, laid out like Go's heap profiles so
 * that `go tool pprof` shows it with its usual heap views:
 *
 *   sample types  alloc_objects/count, alloc_space/bytes,
 *                 inuse_objects/count, inuse_space/bytes (unbiased values)
 *   period type   space/bytes, period = the sampling rate
 *   mappings      one per executable maps line, the main executable first,
 *                 with the file's GNU build id
 *   locations     address = return address - 1; symbolized: one Line per
 *                 frame, inlined callee first
 *
 * Unsymbolized profiles (opt->no_symbols, or frames without names) carry
 * only addresses and mappings with has_* false, so pprof symbolizes them
 * from the binaries (FORMATS.md). Comments: one human line that pprof prints
 * in its header, and "#heapinject ..." lines (hidden by pprof, shown by
 * `pprof -comments`) from which cli/report/read_pprof.c restores the
 * session's totals and ticks.
 */
#include "common/open_regular.h"
#include "cli/report/pprof.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "cli/report/profile.pb-c.h"
#include "cli/report/pprof_meta.h"
#include "cli/profile/merge.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Label pb_label;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Function pb_function;

struct pp_writer {
    const struct cli_profile *p;
    bool symbolized;
    struct cli_strtab strs;

    struct cli_map *maps;
    size_t nmaps;
    uint64_t *map_mapping;       /* per maps line: mapping id, 0 = none */
    uint64_t addr_space;         /* the sample being built: 0, or its process's
                                    index + 1 when the processes' maps differ */

    pb_mapping *mappings;
    size_t nmappings;
    bool *mapping_unsymbolized;  /* some location of the mapping has no lines */

    pb_function *functions;
    size_t nfunctions, capfunctions;
    struct cli_u64map function_ids; /* name index << 32 | file index -> id */

    pb_location *locations;
    size_t nlocations, caplocations;
    struct cli_u64map location_ids; /* address -> id */

    pb_sample *samples;
    size_t nsamples;
};

/* ---- build ids ----------------------------------------------------------- */

/* Lowercase hex of the file's NT_GNU_BUILD_ID note into buf, or "" when the
 * file cannot be read or has none. */
static void read_build_id(const char *path, char *buf, size_t len)
{
    buf[0] = '\0';
    if (elf_version(EV_CURRENT) == EV_NONE)
        return;
    int fd = hi_open_regular(path);
    if (fd < 0)
        return;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    size_t nph = 0;
    if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &nph) == 0) {
        for (size_t i = 0; i < nph && !buf[0]; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
                continue;
            Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)ph.p_offset, ph.p_filesz,
                                               ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR);
            if (!d)
                continue;
            size_t off = 0, noff, doff;
            GElf_Nhdr nh;
            while ((off = gelf_getnote(d, off, &nh, &noff, &doff)) > 0) {
                if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                    !memcmp((char *)d->d_buf + noff, "GNU", 4) && nh.n_descsz * 2 + 1 <= len) {
                    const unsigned char *id = (const unsigned char *)d->d_buf + doff;
                    for (size_t k = 0; k < nh.n_descsz; k++)
                        snprintf(buf + 2 * k, 3, "%02x", id[k]);
                    break;
                }
            }
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
}

/* The build id of a mapped file, read as the target sees it: through
 * /proc/PID/root while the target lives (it may run in another mount
 * namespace), else by its path here. A file deleted since it was mapped has
 * no trustworthy build id: whatever has its name now is another file. */
static void build_id_of(int32_t pid, const struct cli_map *m, const char *path, char *buf, size_t len)
{
    char rooted[4096 + 32];
    buf[0] = '\0';
    if (m->deleted)
        return;
    if (pid > 0) {
        snprintf(rooted, sizeof(rooted), "/proc/%d/root%s", (int)pid, path);
        read_build_id(rooted, buf, len);
        if (buf[0])
            return;
    }
    read_build_id(path, buf, len);
}

/* ---- tables -------------------------------------------------------------- */

static long str(struct pp_writer *w, const char *s)
{
    return cli_strtab_intern(&w->strs, s);
}

static bool path_eq(const struct cli_map *m, const char *path)
{
    return path && m->pathlen == strlen(path) && !memcmp(m->path, path, m->pathlen);
}

static int build_mappings(struct pp_writer *w, const char *binary_hint)
{
    int err = cli_maps_parse(w->p->maps, w->p->maps_len, &w->maps, &w->nmaps);
    if (err)
        return err;
    w->map_mapping = calloc(w->nmaps ? w->nmaps : 1, sizeof(*w->map_mapping));
    w->mappings = calloc(w->nmaps ? w->nmaps : 1, sizeof(*w->mappings));
    w->mapping_unsymbolized = calloc(w->nmaps ? w->nmaps : 1, sizeof(bool));
    if (!w->map_mapping || !w->mappings || !w->mapping_unsymbolized)
        return -ENOMEM;

    /* The main executable: the hinted binary if it is mapped, else the file
     * of the first maps line (the kernel maps the executable first). */
    const char *main_path = NULL;
    size_t main_len = 0;
    for (size_t i = 0; i < w->nmaps; i++) {
        if (path_eq(&w->maps[i], binary_hint)) {
            main_path = w->maps[i].path;
            main_len = w->maps[i].pathlen;
            break;
        }
    }
    for (size_t i = 0; !main_path && i < w->nmaps; i++) {
        if (w->maps[i].pathlen && w->maps[i].path[0] == '/') {
            main_path = w->maps[i].path;
            main_len = w->maps[i].pathlen;
        }
    }

    char build_id[2 * 64 + 1], pathbuf[4096];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < w->nmaps; i++) {
            const struct cli_map *m = &w->maps[i];
            if (m->perms[2] != 'x' || m->pathlen >= sizeof(pathbuf))
                continue;
            bool is_main = main_path && m->pathlen == main_len && !memcmp(m->path, main_path, main_len);
            if (is_main != (pass == 0))
                continue;
            if (m->pathlen && m->path[0] == '/') {
                memcpy(pathbuf, m->path, m->pathlen);
                pathbuf[m->pathlen] = '\0';
                build_id_of(w->p->pid, m, pathbuf, build_id, sizeof(build_id));
            } else {
                /* Code in memory that is no file: named as the symbolizer
                 * names its frames ([vdso], else [jit]); pprof reads no
                 * file for a name in brackets. */
                bool vdso = m->pathlen == 6 && !memcmp(m->path, "[vdso]", 6);
                bool vsys = m->pathlen == 10 && !memcmp(m->path, "[vsyscall]", 10);
                snprintf(pathbuf, sizeof(pathbuf), "%s", vdso ? "[vdso]" : vsys ? "[vsyscall]" : "[jit]");
                build_id[0] = '\0';
            }
            pb_mapping *pm = &w->mappings[w->nmappings];
            perftools__profiles__mapping__init(pm);
            pm->id = w->nmappings + 1;
            pm->memory_start = m->start;
            pm->memory_limit = m->end;
            pm->file_offset = m->offset;
            long fi = str(w, pathbuf), bi = str(w, build_id);
            if (fi < 0 || bi < 0)
                return -ENOMEM;
            pm->filename = fi;
            pm->build_id = bi;
            w->map_mapping[i] = pm->id;
            w->nmappings++;
        }
    }
    return 0;
}

static uint64_t mapping_of(struct pp_writer *w, uint64_t addr)
{
    const struct cli_map *m = cli_maps_find(w->maps, w->nmaps, addr);
    return m ? w->map_mapping[m - w->maps] : 0;
}

static long function_id(struct pp_writer *w, const struct cli_frame *f)
{
    char namebuf[128];
    long ni = str(w, cli_stack_frame_name(f, namebuf, sizeof(namebuf)));
    long fi = str(w, f->file);
    if (ni < 0 || fi < 0)
        return -ENOMEM;
    uint64_t key = (uint64_t)ni << 32 | (uint64_t)fi, id;
    if (!cli_u64map_get(&w->function_ids, key, &id))
        return (long)id;
    if (w->nfunctions == w->capfunctions) {
        size_t nc = w->capfunctions ? w->capfunctions * 2 : 256;
        pb_function *nf = realloc(w->functions, nc * sizeof(*nf));
        if (!nf)
            return -ENOMEM;
        w->functions = nf;
        w->capfunctions = nc;
    }
    pb_function *pf = &w->functions[w->nfunctions];
    perftools__profiles__function__init(pf);
    pf->id = w->nfunctions + 1;
    pf->name = ni;
    pf->system_name = ni;
    pf->filename = fi;
    if (cli_u64map_put(&w->function_ids, key, pf->id))
        return -ENOMEM;
    w->nfunctions++;
    return (long)pf->id;
}

static int add_lines(struct pp_writer *w, pb_location *pl, const struct cli_stack_loc *loc)
{
    bool named = false;
    /* A [jit] frame has no function, but its name ([jit]+0x6) is all
     * anyone will know of it: pprof could not symbolize it either. */
    for (uint32_t i = 0; i < loc->nframes; i++)
        named |= loc->frames[i].function != NULL || (loc->frames[i].module && loc->frames[i].module[0] == '[');
    if (!named)
        return 0; /* leave it to pprof to symbolize from the binary */
    pl->line = calloc(loc->nframes, sizeof(*pl->line));
    if (!pl->line)
        return -ENOMEM;
    for (uint32_t i = 0; i < loc->nframes; i++) {
        pb_line *ln = malloc(sizeof(*ln));
        long fid = function_id(w, &loc->frames[i]);
        if (!ln || fid < 0) {
            free(ln);
            return -ENOMEM;
        }
        perftools__profiles__line__init(ln);
        ln->function_id = (uint64_t)fid;
        ln->line = loc->frames[i].line;
        pl->line[pl->n_line++] = ln;
    }
    return 0;
}

static long location_id(struct pp_writer *w, const struct cli_stack_loc *loc)
{
    uint64_t id;
    /* Processes whose maps differ: an address is a location of its own
     * process only (user addresses stay below bit 47). */
    uint64_t key = loc->addr | w->addr_space << 48;
    if (!cli_u64map_get(&w->location_ids, key, &id))
        return (long)id;
    if (w->nlocations == w->caplocations) {
        size_t nc = w->caplocations ? w->caplocations * 2 : 256;
        pb_location *nl = realloc(w->locations, nc * sizeof(*nl));
        if (!nl)
            return -ENOMEM;
        w->locations = nl;
        w->caplocations = nc;
    }
    pb_location *pl = &w->locations[w->nlocations];
    perftools__profiles__location__init(pl);
    pl->id = w->nlocations + 1;
    w->nlocations++;
    /* A return address points after the call; -1 lands inside it, which is
     * what a symbolizer must look up (and what pprof expects). */
    pl->address = loc->addr ? loc->addr - 1 : 0;
    pl->mapping_id = mapping_of(w, pl->address);
    if (w->symbolized && loc->frames && add_lines(w, pl, loc))
        return -ENOMEM;
    if (pl->mapping_id && !pl->n_line)
        w->mapping_unsymbolized[pl->mapping_id - 1] = true;
    if (cli_u64map_put(&w->location_ids, key, pl->id))
        return -ENOMEM;
    return (long)pl->id;
}

static int64_t round_value(double v)
{
    if (!(v > 0))
        return 0;
    if (v > 9.2e18)
        return INT64_MAX;
    return (int64_t)llround(v);
}

static int build_samples(struct pp_writer *w, long bytes_key)
{
    const struct cli_profile *p = w->p;
    w->samples = calloc(p->nstacks ? p->nstacks : 1, sizeof(*w->samples));
    if (!w->samples)
        return -ENOMEM;
    for (size_t i = 0; i < p->nstacks; i++) {
        const struct cli_stack *s = &p->stacks[i];
        int64_t vals[4] = { round_value(s->alloc_objects), round_value(s->alloc_bytes),
                            round_value(s->live_objects), round_value(s->live_bytes) };
        if (!vals[0] && !vals[1] && !vals[2] && !vals[3])
            continue;
        struct cli_stack_loc *locs;
        size_t nlocs;
        if (cli_stack_locs(s, w->maps, w->nmaps, &locs, &nlocs))
            return -ENOMEM;
        pb_sample *ps = &w->samples[w->nsamples++];
        perftools__profiles__sample__init(ps);
        ps->location_id = calloc(nlocs ? nlocs : 1, sizeof(uint64_t));
        ps->value = calloc(4, sizeof(int64_t));
        ps->label = calloc(4, sizeof(pb_label *));
        pb_label *lb = ps->label ? malloc(4 * sizeof(*lb)) : NULL;
        long kind_key = str(w, "kind"), kind_val = str(w, cli_profile_kind_name(s->kind));
        /* Its process (issue 28): pprof -tagfocus=pid=123, -tagshow=comm. */
        int32_t pid = cli_stack_pid(p, s);
        const struct cli_process *proc = cli_profile_process_find(p, pid);
        long pid_key = str(w, "pid"), comm_key = str(w, "comm");
        long comm_val = proc && proc->comm ? str(w, proc->comm) : 0;
        w->addr_space = p->maps_differ && proc ? (uint64_t)(proc - p->processes) + 1 : 0;
        if (!ps->location_id || !ps->value || !lb || kind_key < 0 || kind_val < 0 || pid_key < 0 || comm_key < 0 ||
            comm_val < 0) {
            free(lb);
            free(locs);
            return -ENOMEM;
        }
        for (size_t k = 0; k < nlocs; k++) {
            long id = location_id(w, &locs[k]);
            if (id < 0) {
                free(lb);
                free(locs);
                return -ENOMEM;
            }
            ps->location_id[ps->n_location_id++] = (uint64_t)id;
        }
        free(locs);
        memcpy(ps->value, vals, sizeof(vals));
        ps->n_value = 4;
        /* Go's heap profiles label each sample with its block size; ours mix
         * sizes, so this is the average (what pprof's -tags shows). */
        perftools__profiles__label__init(lb);
        lb->key = bytes_key;
        double objs = s->alloc_objects > 0 ? s->alloc_objects : s->live_objects;
        double bytes = s->alloc_objects > 0 ? s->alloc_bytes : s->live_bytes;
        lb->num = objs > 0 ? round_value(bytes / objs) : 0;
        ps->label[0] = lb;
        /* "kind": malloc'ed blocks or direct mmap (issue 14), for
         * pprof -tagfocus=kind=mmap. Both labels live in one allocation
         * (freed through label[0]). */
        perftools__profiles__label__init(&lb[1]);
        lb[1].key = kind_key;
        lb[1].str = kind_val;
        ps->label[1] = &lb[1];
        ps->n_label = 2;
        if (pid > 0) {
            perftools__profiles__label__init(&lb[2]);
            lb[2].key = pid_key;
            lb[2].num = pid;
            ps->label[ps->n_label++] = &lb[2];
        }
        if (comm_val > 0) {
            perftools__profiles__label__init(&lb[3]);
            lb[3].key = comm_key;
            lb[3].str = comm_val;
            ps->label[ps->n_label++] = &lb[3];
        }
    }
    return 0;
}

static bool any_symbols(const struct cli_profile *p)
{
    for (size_t i = 0; i < p->nstacks; i++)
        for (uint32_t k = 0; k < p->stacks[i].nframes; k++)
            if (p->stacks[i].frames[k].function)
                return true;
    return false;
}

static void finish_mappings(struct pp_writer *w)
{
    if (!w->symbolized)
        return;
    /* Claim symbols only for mappings whose every location has them: pprof
     * skips mappings with has_functions set and symbolizes the others. */
    for (size_t i = 0; i < w->nmappings; i++) {
        pb_mapping *pm = &w->mappings[i];
        if (w->mapping_unsymbolized[i])
            continue;
        pm->has_functions = true;
        pm->has_filenames = true;
        pm->has_line_numbers = true;
        pm->has_inline_frames = true;
    }
}

static int gzip_write(const uint8_t *data, size_t len, FILE *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    /* windowBits 15 + 16: gzip wrapper, as pprof files are. */
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return -ENOMEM;
    unsigned char chunk[64 * 1024];
    int err = 0, zr;
    zs.next_in = (unsigned char *)data;
    zs.avail_in = (uInt)len;
    do {
        zs.next_out = chunk;
        zs.avail_out = sizeof(chunk);
        zr = deflate(&zs, Z_FINISH);
        if (zr == Z_STREAM_ERROR) {
            err = -EIO;
            break;
        }
        err = cli_buf_write_all(out, chunk, sizeof(chunk) - zs.avail_out);
    } while (!err && zr != Z_STREAM_END);
    deflateEnd(&zs);
    return err;
}

static void free_writer(struct pp_writer *w)
{
    for (size_t i = 0; i < w->nlocations; i++) {
        for (size_t k = 0; k < w->locations[i].n_line; k++)
            free(w->locations[i].line[k]);
        free(w->locations[i].line);
    }
    free(w->locations);
    for (size_t i = 0; i < w->nsamples; i++) {
        free(w->samples[i].location_id);
        free(w->samples[i].value);
        if (w->samples[i].label)
            free(w->samples[i].label[0]);
        free(w->samples[i].label);
    }
    free(w->samples);
    free(w->functions);
    free(w->mappings);
    free(w->mapping_unsymbolized);
    free(w->map_mapping);
    free(w->maps);
    cli_u64map_free(&w->function_ids);
    cli_u64map_free(&w->location_ids);
    cli_strtab_free(&w->strs);
}

/* Arrays of pointers into the writer's flat arrays, as protobuf-c wants. */
static void **ptrs(void *base, size_t n, size_t size)
{
    void **v = calloc(n ? n : 1, sizeof(void *));
    for (size_t i = 0; v && i < n; i++)
        v[i] = (char *)base + i * size;
    return v;
}

int cli_report_pprof(const struct cli_profile *p, const struct cli_format_options *opt, FILE *out)
{
    static const struct cli_format_options defaults;
    struct pp_writer w;
    pb_profile prof;
    pb_value_type types[4], period_type;
    pb_value_type *type_ptrs[4];
    static const char *const type_names[4][2] = {
        { "alloc_objects", "count" }, { "alloc_space", "bytes" },
        { "inuse_objects", "count" }, { "inuse_space", "bytes" },
    };
    void **sample_ptrs = NULL, **mapping_ptrs = NULL, **location_ptrs = NULL, **function_ptrs = NULL;
    struct cli_buf meta = { 0 };
    int64_t comments[3];
    uint8_t *packed = NULL;
    int err = -ENOMEM;

    if (!opt)
        opt = &defaults;
    memset(&w, 0, sizeof(w));
    w.p = p;
    w.symbolized = !opt->no_symbols && any_symbols(p);
    perftools__profiles__profile__init(&prof);

    if (str(&w, "") != 0) /* string_table[0] must be "" */
        goto out;
    for (int i = 0; i < 4; i++) {
        perftools__profiles__value_type__init(&types[i]);
        long t = str(&w, type_names[i][0]), u = str(&w, type_names[i][1]);
        if (t < 0 || u < 0)
            goto out;
        types[i].type = t;
        types[i].unit = u;
        type_ptrs[i] = &types[i];
    }
    perftools__profiles__value_type__init(&period_type);
    long sp = str(&w, "space"), by = str(&w, "bytes");
    if (sp < 0 || by < 0)
        goto out;
    period_type.type = sp;
    period_type.unit = by;

    if ((err = build_mappings(&w, opt->binary_hint)) || (err = build_samples(&w, by)))
        goto out;
    finish_mappings(&w);

    /* Comments: a header line for humans, then machine-readable lines. */
    err = -ENOMEM;
    char human[160];
    snprintf(human, sizeof(human), "heapinject: pid %d, sampling rate %" PRIu64 " bytes, %.1f s",
             p->pid, p->rate, p->duration_s);
    long c0 = str(&w, human);
    if (c0 < 0 || cli_pprof_meta_format(p, &meta, CLI_PPROF_META_TOTALS))
        goto out;
    long c1 = str(&w, meta.data);
    meta.len = 0;
    if (c1 < 0 || cli_pprof_meta_format(p, &meta, CLI_PPROF_META_TICKS))
        goto out;
    long c2 = p->nticks ? str(&w, meta.data) : 0;
    if (c2 < 0)
        goto out;
    comments[0] = c0;
    comments[1] = c1;
    comments[2] = c2;

    sample_ptrs = ptrs(w.samples, w.nsamples, sizeof(pb_sample));
    mapping_ptrs = ptrs(w.mappings, w.nmappings, sizeof(pb_mapping));
    location_ptrs = ptrs(w.locations, w.nlocations, sizeof(pb_location));
    function_ptrs = ptrs(w.functions, w.nfunctions, sizeof(pb_function));
    if (!sample_ptrs || !mapping_ptrs || !location_ptrs || !function_ptrs)
        goto out;
    prof.n_sample_type = 4;
    prof.sample_type = type_ptrs;
    prof.n_sample = w.nsamples;
    prof.sample = (pb_sample **)sample_ptrs;
    prof.n_mapping = w.nmappings;
    prof.mapping = (pb_mapping **)mapping_ptrs;
    prof.n_location = w.nlocations;
    prof.location = (pb_location **)location_ptrs;
    prof.n_function = w.nfunctions;
    prof.function = (pb_function **)function_ptrs;
    prof.n_string_table = w.strs.n;
    prof.string_table = w.strs.strs;
    prof.period_type = &period_type;
    prof.period = (int64_t)(p->rate > INT64_MAX ? INT64_MAX : p->rate);
    /* Saturate: a double at or past 2^63 does not convert (a profile read
     * from a file may say anything). */
    prof.duration_nanos = !(p->duration_s > 0) ? 0
                          : p->duration_s * 1e9 >= 9.2e18 ? INT64_MAX : (int64_t)(p->duration_s * 1e9);
    prof.n_comment = p->nticks ? 3 : 2;
    prof.comment = comments;

    size_t len = perftools__profiles__profile__get_packed_size(&prof);
    packed = malloc(len ? len : 1);
    if (!packed)
        goto out;
    perftools__profiles__profile__pack(&prof, packed);
    err = gzip_write(packed, len, out);
out:
    free(packed);
    free(sample_ptrs);
    free(mapping_ptrs);
    free(location_ptrs);
    free(function_ptrs);
    free(meta.data);
    free_writer(&w);
    return err;
}
