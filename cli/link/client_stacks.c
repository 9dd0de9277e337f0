/* client_stacks.c - snapshot records (SNAP_BEGIN to SNAP_END: threads,
 * stacks as buckets or nodes, maps) into a struct cli_profile, asked for
 * or pushed by the agent (SNAP_PUSH). */
#include "cli/link/client.h"

#include "cli/link/client_wire.h"
#include "cli/link/snapnodes.h"
#include "common/snap_stack.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_stack(struct cli_client *c, struct cli_profile *p, size_t *cap, const struct hi_snap_bucket *bp,
                      uint32_t kind, uint64_t *pcs);

static int add_bucket(struct cli_client *c, struct cli_profile *p, size_t *cap, uint32_t len)
{
    struct hi_snap_bucket b;
    if (len < sizeof(b))
        return cli_client_fail(c, -EPROTO, "malformed SNAP_BUCKET message from the agent (%u bytes)", len);
    memcpy(&b, c->buf, sizeof(b));
    if (b.nframes > HI_MAX_FRAMES)
        return cli_client_fail(c, -EPROTO, "SNAP_BUCKET with %u frames (the bound is %u)", b.nframes, HI_MAX_FRAMES);
    /* The PCs, then (not malloc) a hi_snap_bucket_ext of at least its
     * kind: longer ones come from newer agents and keep their fields. */
    size_t base = sizeof(b) + (size_t)b.nframes * sizeof(uint64_t);
    uint32_t kind = HI_KIND_MALLOC;
    if (len != base && len < base + sizeof(uint32_t))
        return cli_client_fail(c, -EPROTO, "SNAP_BUCKET of %u bytes does not match its %u frames", len, b.nframes);
    if (len > base) {
        memcpy(&kind, c->buf + base, sizeof(kind));
        if (kind >= HI_KIND_COUNT)
            return cli_client_fail(c, -EPROTO, "SNAP_BUCKET of an unknown kind %u", kind);
    }
    uint64_t *pcs = NULL;
    if (b.nframes) {
        if (!(pcs = malloc(b.nframes * sizeof(uint64_t))))
            return cli_client_fail(c, -ENOMEM, "out of memory");
        memcpy(pcs, c->buf + sizeof(b), b.nframes * sizeof(uint64_t));
    }
    return push_stack(c, p, cap, &b, kind, pcs);
}

/* Appends a stack with its counters from b and its PCs (taken over: freed
 * on error too). */
static int push_stack(struct cli_client *c, struct cli_profile *p, size_t *cap, const struct hi_snap_bucket *bp,
                      uint32_t kind, uint64_t *pcs)
{
    struct hi_snap_bucket b = *bp;
    if (p->nstacks >= CLI_CLIENT_MAX_BUCKETS) {
        free(pcs);
        return cli_client_fail(c, -EPROTO, "the agent sent more than %u stacks, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_BUCKETS);
    }
    if (p->nstacks == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        struct cli_stack *ns = realloc(p->stacks, nc * sizeof(*ns));
        if (!ns) {
            free(pcs);
            return cli_client_fail(c, -ENOMEM, "out of memory");
        }
        p->stacks = ns;
        *cap = nc;
    }
    for (uint32_t i = 0; i < b.nframes; i++) {
        uint32_t fk = hi_frame_kind(pcs[i]);
        if (fk != HI_FRAME_NATIVE && (fk != HI_FRAME_PYTHON || !p->python.have)) {
            free(pcs);
            return cli_client_fail(c, -EPROTO, "the agent sent a frame of kind %u%s, which this heapinject cannot read",
                                   fk, fk == HI_FRAME_PYTHON ? " before SNAP_PYTHON" : "");
        }
    }
    struct cli_stack *s = &p->stacks[p->nstacks];
    memset(s, 0, sizeof(*s));
    s->pcs = pcs;
    s->npcs = b.nframes;
    s->live_bytes = (double)b.est_live_bytes;
    s->live_objects = (double)b.est_live_objects;
    s->alloc_bytes = (double)b.est_alloc_bytes;
    s->alloc_objects = (double)b.est_alloc_objects;
    s->raw_live_bytes = b.raw_live_bytes;
    s->raw_live_objects = b.raw_live_objects;
    s->raw_alloc_bytes = b.raw_alloc_bytes;
    s->raw_alloc_objects = b.raw_alloc_objects;
    s->oldest_live_ns = b.oldest_live_ns;
    s->live_age_sum_ms = b.live_age_sum_ms;
    memcpy(s->growth, b.growth, sizeof(s->growth));
    s->first_tid = b.first_tid;
    s->kind = kind;
    s->bucket = (uint32_t)p->nstacks; /* buckets come in their index's order */
    p->nstacks++;
    return 0;
}

static int add_thread(struct cli_client *c, struct cli_profile *p, size_t *cap, uint32_t len)
{
    struct hi_snap_thread t;
    if (len != sizeof(t))
        return cli_client_fail(c, -EPROTO, "malformed SNAP_THREAD message from the agent (%u bytes)", len);
    if (p->nthreads >= CLI_CLIENT_MAX_THREADS)
        return cli_client_fail(c, -EPROTO, "the agent sent more than %u threads, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_THREADS);
    memcpy(&t, c->buf, sizeof(t));
    if (p->nthreads == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct cli_thread *nt = realloc(p->threads, nc * sizeof(*nt));
        if (!nt)
            return cli_client_fail(c, -ENOMEM, "out of memory");
        p->threads = nt;
        *cap = nc;
    }
    struct cli_thread *ct = &p->threads[p->nthreads++];
    memset(ct, 0, sizeof(*ct));
    ct->tid = t.tid;
    ct->alive = t.alive != 0;
    /* The name is NUL-padded on the wire but need not be terminated. Kept
     * as the thread named itself: every writer escapes it as it escapes
     * other names from the target (\x1b in text, \u001b in JSON); a '?'
     * here made --by thread differ from the rest, and an escape here
     * would be escaped twice (issue 25). */
    for (size_t i = 0; i < HI_THREAD_NAME_LEN && t.name[i]; i++)
        ct->name[i] = t.name[i];
    ct->alloc_bytes = t.alloc_bytes;
    ct->alloc_calls = t.alloc_calls;
    ct->free_bytes = t.free_bytes;
    ct->free_calls = t.free_calls;
    return 0;
}

/* SNAP_PYCODE: entries of ascending ids (after SNAP_PYTHON). */
static int add_pycodes(struct cli_client *c, struct cli_profile *p, size_t *cap, uint32_t len)
{
    struct cli_python *py = &p->python;
    if (!py->have)
        return cli_client_fail(c, -EPROTO, "the agent sent SNAP_PYCODE before SNAP_PYTHON");
    for (const uint8_t *q = c->buf, *end = c->buf + len; q < end;) {
        struct hi_snap_pycode h;
        if ((size_t)(end - q) < sizeof(h))
            return cli_client_fail(c, -EPROTO, "malformed SNAP_PYCODE message from the agent (an entry cut off)");
        memcpy(&h, q, sizeof(h));
        q += sizeof(h);
        if ((size_t)(end - q) < (size_t)h.name_len + h.file_len || h.id == 0 || h.id > 0xffffffu ||
            (py->ncodes && h.id <= py->codes[py->ncodes - 1].id))
            return cli_client_fail(c, -EPROTO, "malformed SNAP_PYCODE message from the agent (code id %u)", h.id);
        if (py->ncodes >= (1u << 24))
            return cli_client_fail(c, -EPROTO, "the agent sent more Python codes than ids");
        if (py->ncodes == *cap) {
            size_t nc = *cap ? *cap * 2 : 256;
            struct cli_pycode *n = realloc(py->codes, nc * sizeof(*n));
            if (!n)
                return cli_client_fail(c, -ENOMEM, "out of memory");
            py->codes = n;
            *cap = nc;
        }
        struct cli_pycode *e = &py->codes[py->ncodes];
        e->id = h.id;
        e->firstlineno = h.firstlineno;
        e->name = strndup((const char *)q, h.name_len);
        e->file = strndup((const char *)q + h.name_len, h.file_len);
        if (!e->name || !e->file) {
            free(e->name);
            free(e->file);
            return cli_client_fail(c, -ENOMEM, "out of memory");
        }
        py->ncodes++;
        q += h.name_len + h.file_len;
    }
    return 0;
}

/* What one snapshot has taken so far, against the bounds of client.h. */
struct snap_state {
    struct cli_snapnodes nodes; /* SNAP_NODES so far (HI_SNAP_WANT_NODES) */
    size_t cap_stacks, cap_threads, cap_maps, cap_pycodes;
    uint64_t bytes;        /* headers and bodies of its records */
    size_t maps_lines;     /* complete lines of maps text */
    size_t line_len;       /* bytes of the maps line not yet ended */
};

static int add_maps(struct cli_client *c, struct cli_profile *p, struct snap_state *st, uint32_t len)
{
    if (p->maps_len + len > CLI_CLIENT_MAX_MAPS)
        return cli_client_fail(c, -EPROTO, "the agent sent more than %u MiB of maps text, the bound" PAST_BOUND,
                    CLI_CLIENT_MAX_MAPS >> 20);
    /* Each line becomes a module the symbolizer keeps: count them, and
     * refuse a line no kernel writes (a path is at most PATH_MAX). */
    for (const uint8_t *q = c->buf, *end = c->buf + len; q < end;) {
        const uint8_t *nl = memchr(q, '\n', (size_t)(end - q));
        st->line_len += (size_t)((nl ? nl : end) - q);
        if (st->line_len > CLI_CLIENT_MAX_MAPS_LINE)
            return cli_client_fail(c, -EPROTO, "the agent sent a maps line longer than %u bytes, the bound" PAST_BOUND,
                        CLI_CLIENT_MAX_MAPS_LINE);
        if (!nl)
            break;
        st->line_len = 0;
        if (++st->maps_lines > CLI_CLIENT_MAX_MAPS_LINES)
            return cli_client_fail(c, -EPROTO, "the agent sent more than %u lines of maps, the bound" PAST_BOUND,
                        CLI_CLIENT_MAX_MAPS_LINES);
        q = nl + 1;
    }
    if (p->maps_len + len + 1 > st->cap_maps) {
        size_t nc = st->cap_maps ? st->cap_maps : 16384;
        while (nc < p->maps_len + len + 1)
            nc *= 2;
        char *nm = realloc(p->maps, nc);
        if (!nm)
            return cli_client_fail(c, -ENOMEM, "out of memory");
        p->maps = nm;
        st->cap_maps = nc;
    }
    memcpy(p->maps + p->maps_len, c->buf, len);
    p->maps_len += len;
    p->maps[p->maps_len] = '\0';
    return 0;
}

/* One SNAP_STACKS record: stacks whose PCs are paths of st->nodes. */
static int add_stacks(struct cli_client *c, struct cli_profile *p, struct snap_state *st, uint32_t len)
{
    char why[160];
    if (len == 0)
        return cli_client_fail(c, -EPROTO, "malformed SNAP_STACKS message from the agent (empty)");
    for (const uint8_t *q = c->buf, *end = c->buf + len; q < end;) {
        struct hi_snap_bucket b;
        uint32_t node, kind;
        if (hi_snap_stack_get(&q, end, &b, &node, &kind) < 0)
            return cli_client_fail(c, -EPROTO, "malformed SNAP_STACKS message from the agent (a stack cut off or out of "
                                    "range at byte %zu of %u)", (size_t)(q - c->buf), len);
        if (kind >= HI_KIND_COUNT)
            return cli_client_fail(c, -EPROTO, "SNAP_STACKS holds a stack of an unknown kind %u", kind);
        if (b.nframes > HI_MAX_FRAMES)
            return cli_client_fail(c, -EPROTO, "SNAP_STACKS holds a stack of %u frames (the bound is %u)", b.nframes,
                        HI_MAX_FRAMES);
        uint64_t *pcs;
        int rc = cli_snapnodes_stack(&st->nodes, node, b.nframes, &pcs, why, sizeof(why));
        if (rc < 0)
            return cli_client_fail(c, rc, "%s", why);
        if ((rc = push_stack(c, p, &st->cap_stacks, &b, kind, pcs)) < 0)
            return rc;
    }
    return 0;
}

/* The records of one snapshot, SNAP_BEGIN to SNAP_END, into p (zeroed by
 * the caller): an answer to SNAPSHOT_REQ or a pushed one. */
static int recv_snapshot(struct cli_client *c, struct cli_profile *p)
{
    struct hi_snap_begin b;
    struct snap_state st = { 0 };
    bool have_hist = false;
    int rc;

    if ((rc = cli_client_expect(c, HI_MSG_SNAP_BEGIN, &b, sizeof(b))) < 0)
        return rc;
    p->pid = b.pid;
    p->rate = b.rate;
    p->attach_ns = b.attach_ns;
    p->snapshot_ns = b.now_ns;
    p->duration_s = b.now_ns > b.attach_ns ? (double)(b.now_ns - b.attach_ns) / 1e9 : 0;
    p->rss_bytes = b.rss_bytes;
    p->totals = b.totals;
    p->tick_ms = c->hello.tick_ms;

    for (;;) {
        struct hi_msg_header h;
        if ((rc = cli_client_recv(c, &h, c->timeout_ms, false)) < 0)
            goto out;
        st.bytes += sizeof(h) + h.length;
        if (st.bytes > CLI_CLIENT_MAX_SNAPSHOT_BYTES) {
            rc = cli_client_fail(c, -EPROTO, "the agent's snapshot is larger than %u MiB, the bound" PAST_BOUND,
                      CLI_CLIENT_MAX_SNAPSHOT_BYTES >> 20);
            goto out;
        }
        switch (h.type) {
        case HI_MSG_SNAP_THREAD:
            rc = add_thread(c, p, &st.cap_threads, h.length);
            break;
        case HI_MSG_SNAP_HIST:
            if (have_hist || h.length != sizeof(p->hist)) {
                rc = cli_client_fail(c, -EPROTO, "malformed or repeated SNAP_HIST message from the agent");
                break;
            }
            memcpy(&p->hist, c->buf, sizeof(p->hist));
            have_hist = true;
            break;
        case HI_MSG_SNAP_MMAP: /* absent from older agents */
            if (p->have_mmap || h.length < sizeof(p->mmap)) {
                rc = cli_client_fail(c, -EPROTO, "malformed or repeated SNAP_MMAP message from the agent");
                break;
            }
            memcpy(&p->mmap, c->buf, sizeof(p->mmap));
            p->have_mmap = true;
            break;
        case HI_MSG_SNAP_WALKS: /* asked for; a longer body has fields we do not know */
            if (p->have_walks || h.length < offsetof(struct hi_snap_walks, budget_bytes)) {
                rc = cli_client_fail(c, -EPROTO, "malformed or repeated SNAP_WALKS message from the agent");
                break;
            }
            memset(&p->walks, 0, sizeof(p->walks)); /* an older agent's has no budget */
            memcpy(&p->walks, c->buf, h.length < sizeof(p->walks) ? h.length : sizeof(p->walks));
            if (p->walks.truncated > p->walks.walks) /* racy reads in the agent: never more than all */
                p->walks.truncated = p->walks.walks;
            p->have_walks = true;
            break;
        case HI_MSG_SNAP_PYMALLOC: /* asked for; only from a Python process */
            if (p->have_pymalloc || h.length < sizeof(p->pymalloc)) {
                rc = cli_client_fail(c, -EPROTO, "malformed or repeated SNAP_PYMALLOC message from the agent");
                break;
            }
            memcpy(&p->pymalloc, c->buf, sizeof(p->pymalloc));
            p->pymalloc.why[sizeof(p->pymalloc.why) - 1] = '\0';
            p->have_pymalloc = true;
            break;
        case HI_MSG_SNAP_PYTHON: /* asked for; a longer body has fields we do not know */
            if (p->python.have || h.length < offsetof(struct hi_snap_python, why) + sizeof(p->python.st.why)) {
                rc = cli_client_fail(c, -EPROTO, "malformed or repeated SNAP_PYTHON message from the agent");
                break;
            }
            memset(&p->python.st, 0, sizeof(p->python.st)); /* an older agent's ends at why */
            memcpy(&p->python.st, c->buf, h.length < sizeof(p->python.st) ? h.length : sizeof(p->python.st));
            p->python.st.why[sizeof(p->python.st.why) - 1] = '\0';
            p->python.have = true;
            break;
        case HI_MSG_SNAP_PYCODE:
            rc = add_pycodes(c, p, &st.cap_pycodes, h.length);
            break;
        case HI_MSG_SNAP_BUCKET:
            rc = add_bucket(c, p, &st.cap_stacks, h.length);
            break;
        case HI_MSG_SNAP_NODES: {
            char why[160];
            if ((rc = cli_snapnodes_add(&st.nodes, c->buf, h.length, why, sizeof(why))) < 0)
                rc = cli_client_fail(c, rc, "%s%s", why, rc == -EPROTO && strstr(why, "the bound") ? PAST_BOUND : "");
            break;
        }
        case HI_MSG_SNAP_STACKS:
            rc = add_stacks(c, p, &st, h.length);
            break;
        case HI_MSG_SNAP_MAPS:
            rc = add_maps(c, p, &st, h.length);
            break;
        case HI_MSG_SNAP_END: {
            struct hi_snap_end e;
            if (h.length != sizeof(e)) {
                rc = cli_client_fail(c, -EPROTO, "malformed SNAP_END message from the agent (%u bytes)", h.length);
                break;
            }
            memcpy(&e, c->buf, sizeof(e));
            if (e.buckets_sent != p->nstacks) {
                rc = cli_client_fail(c, -EPROTO, "the agent announced %llu stacks but sent %zu",
                          (unsigned long long)e.buckets_sent, p->nstacks);
                break;
            }
            cli_snapnodes_free(&st.nodes);
            return 0;
        }
        default:
            rc = cli_client_fail(c, -EPROTO, "the agent sent %s in the middle of a snapshot", cli_client_type_name(h.type));
            break;
        }
        if (rc < 0)
            goto out;
    }
out:
    cli_snapnodes_free(&st.nodes);
    cli_profile_free(p);
    return rc;
}

int cli_client_snapshot(struct cli_client *c, struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    /* Stacks as nodes: they share their outer frames (an older agent
     * ignores the body and sends SNAP_BUCKETs, which are still read), and
     * how the stack walks went (an older agent sends no SNAP_WALKS). */
    struct hi_snapshot_req req = { HI_SNAP_WANT_NODES | HI_SNAP_WANT_WALKS | HI_SNAP_WANT_PYMALLOC |
                                       HI_SNAP_WANT_RUNTIME_FRAMES, 0 };
    int rc = cli_client_send(c, HI_MSG_SNAPSHOT_REQ, &req, sizeof(req));
    return rc < 0 ? rc : recv_snapshot(c, p);
}

void cli_client_drop_pushed(struct cli_client *c)
{
    if (!c->pushed)
        return;
    cli_profile_free(&c->pushed->p);
    free(c->pushed);
    c->pushed = NULL;
}

/* SNAP_PUSH's body is in c->buf: the snapshot that follows replaces the
 * one kept. A push inside a push is no agent's. */
int cli_client_recv_pushed(struct cli_client *c, uint32_t len)
{
    struct cli_pushed *np;
    if (len != sizeof(np->why))
        return cli_client_fail(c, -EPROTO, "malformed SNAP_PUSH message from the agent (%u bytes)", len);
    if (c->in_push)
        return cli_client_fail(c, -EPROTO, "the agent pushed a snapshot in the middle of another");
    if (!(np = calloc(1, sizeof(*np))))
        return cli_client_fail(c, -ENOMEM, "out of memory");
    memcpy(&np->why, c->buf, sizeof(np->why));
    c->in_push = true;
    int rc = recv_snapshot(c, &np->p);
    c->in_push = false;
    if (rc < 0) {
        free(np);
        return rc;
    }
    cli_client_drop_pushed(c);
    c->pushed = np;
    c->push_count++;
    return 0;
}

bool cli_client_take_pushed(struct cli_client *c, struct cli_profile *p, struct hi_snap_push *why)
{
    if (!c->pushed)
        return false;
    *p = c->pushed->p;
    *why = c->pushed->why;
    free(c->pushed);
    c->pushed = NULL;
    return true;
}

int cli_client_read_snapshot(struct cli_client *c, struct cli_profile *p)
{
    memset(p, 0, sizeof(*p));
    return recv_snapshot(c, p);
}
