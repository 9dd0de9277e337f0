/* snapshot.c - totals, ticks and the snapshot record stream. */
#include "payload/serve/snapshot.h"
#include "payload/sys/sys.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "common/snap_stack.h"
#include "payload/record/record.h"
#include "payload/interpose/interpose.h"
#include "payload/python/python.h"
#include "payload/serve/stacknodes.h"

#define PL_MAPS_CHUNK (60u * 1024u) /* < HI_MAX_RECORD_BODY */
#define PL_BATCH (60u * 1024u)      /* SNAP_NODES / SNAP_STACKS bodies, < HI_MAX_RECORD_BODY */

/* Agent-thread scratch. */
static struct pl_thread_view *pl_views;   /* PL_MAX_THREADS + 1 */
static uint64_t *pl_oldest, *pl_agesum;   /* PL_MAX_BUCKETS each */
static char *pl_maps_buf;                 /* PL_MAPS_CHUNK */
static unsigned char *pl_node_batch, *pl_stack_batch; /* PL_BATCH each */

int pl_snapshot_init(void)
{
    if (pl_views)
        return 0;
    pl_views = pl_arena_map_child_empty(sizeof(*pl_views) * (PL_MAX_THREADS + 1));
    pl_oldest = pl_arena_map_child_empty(sizeof(uint64_t) * PL_MAX_BUCKETS);
    pl_agesum = pl_arena_map_child_empty(sizeof(uint64_t) * PL_MAX_BUCKETS);
    pl_maps_buf = pl_arena_map_child_empty(PL_MAPS_CHUNK);
    pl_node_batch = pl_arena_map_child_empty(PL_BATCH);
    pl_stack_batch = pl_arena_map_child_empty(PL_BATCH);
    if (!pl_views || !pl_oldest || !pl_agesum || !pl_maps_buf || !pl_node_batch || !pl_stack_batch)
        return -ENOMEM;
    /* Without it stacks go as SNAP_BUCKETs: not a reason to fail. */
    (void)pl_stacknodes_init();
    return 0;
}

void pl_snapshot_release(void)
{
    if (!pl_views)
        return;
    pl_arena_clear(pl_views, sizeof(*pl_views) * (PL_MAX_THREADS + 1));
    pl_arena_clear(pl_oldest, sizeof(uint64_t) * PL_MAX_BUCKETS);
    pl_arena_clear(pl_agesum, sizeof(uint64_t) * PL_MAX_BUCKETS);
    pl_arena_clear(pl_maps_buf, PL_MAPS_CHUNK);
    pl_arena_clear(pl_node_batch, PL_BATCH);
    pl_arena_clear(pl_stack_batch, PL_BATCH);
    pl_stacknodes_end();
}

static uint64_t fp_to_objs(uint64_t fp)
{
    return (fp + PL_OBJ_FP_ONE / 2) >> PL_OBJ_FP_SHIFT;
}

/* Reads a small /proc file into buf (NUL-terminated); bytes or -errno. */
static ssize_t read_small_fd(int fd, char *buf, size_t len)
{
    if (fd < 0)
        return fd;
    ssize_t n;
    do
        n = read(fd, buf, len - 1);
    while (n < 0 && errno == EINTR);
    int err = errno;
    close(fd);
    if (n < 0)
        return -err;
    buf[n] = '\0';
    return n;
}

static ssize_t read_small(const char *path, char *buf, size_t len)
{
    if (!pl_seccomp_recheck(HI_GATE_PROC))
        return -EPERM;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    return read_small_fd(fd < 0 ? -errno : fd, buf, len);
}

uint64_t pl_rss_bytes(void)
{
    char buf[128];
    /* A filter installed after attach may forbid the openat. */
    if (!pl_seccomp_recheck(HI_GATE_PROC))
        return 0;
    /* This thread's view: the process's own statm reads zeros once its
     * main thread has exited. */
    if (read_small_fd(pl_proc_open_self("statm"), buf, sizeof(buf)) <= 0)
        return 0;
    const char *p = buf;
    while (*p && *p != ' ')
        p++;
    uint64_t pages = 0;
    for (p++; *p >= '0' && *p <= '9'; p++)
        pages = pages * 10 + (uint64_t)(*p - '0');
    return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

static unsigned take_threads(void)
{
    return pl_thread_snapshot(pl_views, PL_MAX_THREADS + 1);
}

/* The totals of every thread view and bucket. *walked (may be NULL): the
 * samples of every kind that found a bucket, read in the same pass as the
 * malloc family's raw_samples, so that the two agree exactly (read in a
 * second pass, a sample landing between the passes made the walks 2 more
 * than the samples at --rate 1, which CI met). */
static bool pl_snap_at_end; /* pl_snapshot_at_end */

void pl_snapshot_at_end(bool at_end)
{
    pl_snap_at_end = at_end;
}

static void fill_totals(struct hi_totals *t, unsigned nviews, uint64_t *walked)
{
    uint64_t all = 0;
    memset(t, 0, sizeof(*t));
    for (unsigned i = 0; i < nviews; i++) {
        t->exact_alloc_bytes += pl_views[i].c.alloc_bytes;
        t->exact_alloc_calls += pl_views[i].c.alloc_calls;
        t->exact_free_bytes += pl_views[i].c.free_bytes;
        t->exact_free_calls += pl_views[i].c.free_calls;
    }
    uint32_t n = pl_bucket_count();
    uint64_t alloc_fp = 0, live_fp = 0;
    for (uint32_t i = 0; i < n; i++) {
        const struct pl_bucket *b = pl_bucket_at(i);
        uint64_t raw = __atomic_load_n(&b->raw_alloc_objs, __ATOMIC_RELAXED);
        all += raw;
        if (b->kind != HI_KIND_MALLOC)
            continue; /* the totals are the malloc family's (proto.h) */
        t->est_alloc_bytes += __atomic_load_n(&b->est_alloc_bytes, __ATOMIC_RELAXED);
        t->est_live_bytes += __atomic_load_n(&b->est_live_bytes, __ATOMIC_RELAXED);
        alloc_fp += __atomic_load_n(&b->est_alloc_objs_fp, __ATOMIC_RELAXED);
        live_fp += __atomic_load_n(&b->est_live_objs_fp, __ATOMIC_RELAXED);
        t->raw_samples += raw;
    }
    if (walked)
        *walked = all;
    t->est_alloc_objects = fp_to_objs(alloc_fp);
    t->est_live_objects = fp_to_objs(live_fp);
    if (t->est_live_bytes > t->est_alloc_bytes) /* counters read at different moments */
        t->est_live_bytes = t->est_alloc_bytes;
    if (t->est_live_objects > t->est_alloc_objects)
        t->est_live_objects = t->est_alloc_objects;
    t->est_free_bytes = t->est_alloc_bytes - t->est_live_bytes;
    t->est_free_objects = t->est_alloc_objects - t->est_live_objects;
    t->dropped_samples = __atomic_load_n(&pl_dropped, __ATOMIC_RELAXED);
    t->buckets = n;
    t->payload_mem_bytes = pl_snap_at_end ? 0 : pl_arena_resident_bytes();
}

void pl_snapshot_totals(struct hi_totals *t)
{
    fill_totals(t, take_threads(), NULL);
}

void pl_snapshot_tick(struct hi_tick *tick)
{
    memset(tick, 0, sizeof(*tick));
    tick->now_ns = pl_now_ns();
    tick->rate = __atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED);
    pl_snapshot_totals(&tick->totals);
    tick->rss_bytes = pl_rss_bytes();
}

struct age_arg {
    uint32_t nbuckets;
    uint64_t now;
};

static void age_cb(const struct pl_live *e, void *arg)
{
    struct age_arg *a = arg;
    if (e->bucket < 0 || (uint32_t)e->bucket >= a->nbuckets)
        return;
    uint32_t b = (uint32_t)e->bucket;
    if (pl_oldest[b] == 0 || e->time_ns < pl_oldest[b])
        pl_oldest[b] = e->time_ns;
    if (a->now > e->time_ns)
        pl_agesum[b] += (a->now - e->time_ns) / 1000000u;
}

/* A sampled mapping's age counts once, on the piece holding its object. */
static void map_age_cb(const struct pl_mapent *e, void *arg)
{
    if (!e->objs)
        return;
    struct pl_live l = { e->lo, e->hi - e->lo, e->est_bytes, e->est_objs_fp, e->time_ns, e->bucket, 0 };
    age_cb(&l, arg);
}

static void thread_name(int32_t tid, char name[HI_THREAD_NAME_LEN])
{
    memset(name, 0, HI_THREAD_NAME_LEN);
    if (tid == 0) {
        memcpy(name, "(exited)", 8);
        return;
    }
    char path[64], buf[32];
    struct pl_buf b;
    pl_buf_init(&b, path, sizeof(path));
    /* The main thread's is the process's own: no entry below
     * /proc/PID/task, whose dentries its reaper walks when the process
     * ends (procmaps.h; a followed backend's last snapshot named only its
     * main thread, through task/TID, at every exit). */
    if (tid == (int32_t)getpid()) {
        pl_buf_str(&b, "/proc/self/comm");
    } else {
        pl_buf_str(&b, "/proc/self/task/");
        pl_buf_u64(&b, (uint64_t)tid);
        pl_buf_str(&b, "/comm");
    }
    ssize_t n = read_small(path, buf, sizeof(buf));
    if (n <= 0)
        return;
    size_t len = (size_t)n;
    while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\0'))
        len--;
    if (len > HI_THREAD_NAME_LEN - 1)
        len = HI_THREAD_NAME_LEN - 1;
    memcpy(name, buf, len);
}

/* Set by pl_snapshot_maps_text (agent). */
static const char *pl_maps_given;
static size_t pl_maps_given_len;

void pl_snapshot_maps_text(const char *text, size_t len)
{
    pl_maps_given = text;
    pl_maps_given_len = len;
}

static int send_maps(pl_send_fn send, void *ctx)
{
    if (pl_maps_given) {
        int err = 0;
        for (size_t off = 0; !err && off < pl_maps_given_len; off += PL_MAPS_CHUNK) {
            size_t n = pl_maps_given_len - off < PL_MAPS_CHUNK ? pl_maps_given_len - off : PL_MAPS_CHUNK;
            err = send(ctx, HI_MSG_SNAP_MAPS, pl_maps_given + off, (uint32_t)n);
        }
        return err;
    }
    int fd = pl_proc_open_self("maps"); /* see pl_rss_bytes */
    if (fd < 0)
        return 0; /* no maps: the cli cannot symbolize, the rest is still useful */
    int err = 0;
    for (;;) {
        size_t have = 0;
        while (have < PL_MAPS_CHUNK) {
            ssize_t r = read(fd, pl_maps_buf + have, PL_MAPS_CHUNK - have);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            have += (size_t)r;
        }
        if (have == 0)
            break;
        err = send(ctx, HI_MSG_SNAP_MAPS, pl_maps_buf, (uint32_t)have);
        if (err || have < PL_MAPS_CHUNK)
            break;
    }
    close(fd);
    return err;
}

/* SNAP_NODES and SNAP_STACKS records being filled: a stack's nodes are
 * always sent before the stack (flush_stacks sends the nodes first). */
struct batches {
    pl_send_fn send;
    void *ctx;
    uint32_t node_len, stack_len;
};

static int flush_nodes(struct batches *bt)
{
    int err = 0;
    if (bt->node_len)
        err = bt->send(bt->ctx, HI_MSG_SNAP_NODES, pl_node_batch, bt->node_len);
    bt->node_len = 0;
    return err;
}

static int flush_stacks(struct batches *bt)
{
    int err = flush_nodes(bt);
    if (!err && bt->stack_len)
        err = bt->send(bt->ctx, HI_MSG_SNAP_STACKS, pl_stack_batch, bt->stack_len);
    bt->stack_len = 0;
    return err;
}

static int emit_node(void *ctx, uint32_t id, uint32_t parent, uint64_t pc)
{
    struct batches *bt = ctx;
    struct hi_snap_node n = { pc, parent };
    (void)id; /* ids are implicit: the order of sending */
    if (bt->node_len + sizeof(n) > PL_BATCH) {
        int err = flush_nodes(bt);
        if (err)
            return err;
    }
    memcpy(pl_node_batch + bt->node_len, &n, sizeof(n));
    bt->node_len += (uint32_t)sizeof(n);
    return 0;
}

static int add_stack(struct batches *bt, const struct hi_snap_bucket *r, uint32_t node, uint32_t kind)
{
    if (bt->stack_len + HI_SNAP_STACK_MAX > PL_BATCH) {
        int err = flush_stacks(bt);
        if (err)
            return err;
    }
    bt->stack_len += (uint32_t)hi_snap_stack_put(pl_stack_batch + bt->stack_len, r, node, kind);
    return 0;
}

/* Stacks captured this session: every sample of either kind walked one,
 * counted in its bucket (raw_alloc_objs, also when the address map was
 * full: fill_totals sums them) or, when the stack table was full, in
 * pl_walks_unkept; not pl_dropped, which counts the first kind of drop too
 * (it over-counted by those). Summed at the snapshot rather than counted
 * on the sampled path, where a shared counter would be a cache line every
 * sampling thread writes. */
static uint64_t walks_since_attach(uint64_t walked)
{
    return __atomic_load_n(&pl_walks_unkept, __ATOMIC_RELAXED) + walked;
}

int pl_snapshot_send(pl_send_fn send, void *ctx)
{
    return pl_snapshot_send_req(send, ctx, NULL, 0);
}

int pl_snapshot_send_req(pl_send_fn send, void *ctx, const void *req, uint32_t req_len)
{
    struct hi_snapshot_req q = { 0, 0 };
    if (req && req_len) /* shorter: an older cli's; longer: fields we do not know */
        memcpy(&q, req, req_len < sizeof(q) ? req_len : sizeof(q));
    bool want_nodes = (q.flags & HI_SNAP_WANT_NODES) != 0;
    bool want_walks = (q.flags & HI_SNAP_WANT_WALKS) != 0;
    struct hi_snap_pymalloc pym;
    bool send_pym = (q.flags & HI_SNAP_WANT_PYMALLOC) && pl_pymalloc_state(&pym);
    bool want_runtime = (q.flags & HI_SNAP_WANT_RUNTIME_FRAMES) != 0; /* else native frames only */
    unsigned nviews = take_threads();
    uint32_t nb = pl_bucket_count();
    uint64_t now = pl_now_ns();

    struct hi_snap_begin begin;
    memset(&begin, 0, sizeof(begin));
    begin.pid = (int32_t)getpid();
    begin.nthreads = nviews;
    begin.rate = __atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED);
    begin.attach_ns = pl_attach_ns;
    begin.now_ns = now;
    begin.nbuckets = nb;
    begin.rss_bytes = pl_rss_bytes();
    uint64_t walked = 0;
    /* Before the totals: a sample dropped at the budget is counted there
     * first and in the drops after, and a million a second are dropped at
     * --rate 1 while the totals' pass runs (the budget's count read after
     * it came out 531 above all drops). */
    uint64_t budget_dropped = pl_arena_budget_dropped();
    fill_totals(&begin.totals, nviews, &walked);
    /* Read in the totals' own pass over the buckets: walks and the samples
     * they include are of one moment. */
    struct hi_snap_walks w = { 0, 0, 0, 0 };
    if (want_walks) {
        w.walks = walks_since_attach(walked);
        w.truncated = __atomic_load_n(&pl_stack_truncated, __ATOMIC_RELAXED);
        w.budget_bytes = pl_arena_budget_cap();
        w.budget_dropped = budget_dropped < begin.totals.dropped_samples ? budget_dropped
                                                                          : begin.totals.dropped_samples;
    }
    int err = send(ctx, HI_MSG_SNAP_BEGIN, &begin, sizeof(begin));
    if (err)
        return err;

    struct hi_snap_hist hist;
    memset(&hist, 0, sizeof(hist));
    for (unsigned i = 0; i < nviews; i++) {
        struct hi_snap_thread th;
        memset(&th, 0, sizeof(th));
        th.tid = pl_views[i].tid;
        th.alive = pl_views[i].alive;
        thread_name(th.tid, th.name);
        th.alloc_bytes = pl_views[i].c.alloc_bytes;
        th.alloc_calls = pl_views[i].c.alloc_calls;
        th.free_bytes = pl_views[i].c.free_bytes;
        th.free_calls = pl_views[i].c.free_calls;
        for (unsigned c = 0; c < HI_HIST_CLASSES; c++) {
            hist.calls[c] += pl_views[i].c.hist_calls[c];
            hist.bytes[c] += pl_views[i].c.hist_bytes[c];
        }
        if ((err = send(ctx, HI_MSG_SNAP_THREAD, &th, sizeof(th))))
            return err;
    }
    if ((err = send(ctx, HI_MSG_SNAP_HIST, &hist, sizeof(hist))))
        return err;
    struct hi_snap_mmap mm;
    memset(&mm, 0, sizeof(mm));
    pl_hooks_mmap_counts(&mm);
    if ((err = send(ctx, HI_MSG_SNAP_MMAP, &mm, sizeof(mm))))
        return err;
    if (want_walks && (err = send(ctx, HI_MSG_SNAP_WALKS, &w, sizeof(w))))
        return err;
    if (send_pym && (err = send(ctx, HI_MSG_SNAP_PYMALLOC, &pym, sizeof(pym))))
        return err;
    if (want_runtime && (err = pl_py_send(send, ctx, (unsigned char *)pl_maps_buf, PL_MAPS_CHUNK)))
        return err;

    /* Oldest live block and age sum per bucket: one pass over the map. */
    memset(pl_oldest, 0, sizeof(uint64_t) * nb);
    memset(pl_agesum, 0, sizeof(uint64_t) * nb);
    struct age_arg aa = { nb, now };
    pl_addrmap_foreach(age_cb, &aa);
    pl_maptrack_foreach(map_age_cb, &aa);

    struct batches bt = { send, ctx, 0, 0 };
    bool nodes = want_nodes && pl_node_batch && pl_stack_batch;
    if (nodes) {
        uint64_t frames = 0;
        for (uint32_t i = 0; i < nb; i++)
            frames += pl_bucket_at(i)->nframes;
        pl_stacknodes_begin(frames);
    }
    union {
        struct hi_snap_bucket b;
        unsigned char raw[sizeof(struct hi_snap_bucket) + HI_MAX_FRAMES * sizeof(uint64_t) +
                          sizeof(struct hi_snap_bucket_ext)];
    } rec;
    for (uint32_t i = 0; i < nb && !err; i++) {
        const struct pl_bucket *b = pl_bucket_at(i);
        struct hi_snap_bucket *r = &rec.b;
        memset(r, 0, sizeof(*r));
        r->raw_live_bytes = __atomic_load_n(&b->raw_live_bytes, __ATOMIC_RELAXED);
        r->raw_live_objects = __atomic_load_n(&b->raw_live_objs, __ATOMIC_RELAXED);
        r->raw_alloc_bytes = __atomic_load_n(&b->raw_alloc_bytes, __ATOMIC_RELAXED);
        r->raw_alloc_objects = __atomic_load_n(&b->raw_alloc_objs, __ATOMIC_RELAXED);
        r->est_live_bytes = __atomic_load_n(&b->est_live_bytes, __ATOMIC_RELAXED);
        r->est_live_objects = fp_to_objs(__atomic_load_n(&b->est_live_objs_fp, __ATOMIC_RELAXED));
        r->est_alloc_bytes = __atomic_load_n(&b->est_alloc_bytes, __ATOMIC_RELAXED);
        r->est_alloc_objects = fp_to_objs(__atomic_load_n(&b->est_alloc_objs_fp, __ATOMIC_RELAXED));
        r->oldest_live_ns = r->raw_live_objects ? pl_oldest[i] : 0;
        r->live_age_sum_ms = pl_agesum[i];
        for (unsigned g = 0; g < HI_GROWTH_POINTS; g++)
            r->growth[g] = b->growth[g];
        r->first_tid = b->first_tid;
        uint32_t nf = b->nframes <= HI_MAX_FRAMES ? b->nframes : HI_MAX_FRAMES;
        const uintptr_t *pcs = pl_bucket_frames(b);
        uintptr_t native[HI_MAX_FRAMES];
        if (!want_runtime) { /* a cli that cannot read them (issue 29) */
            nf = pl_py_native_only(pcs, nf, native);
            pcs = native;
        }
        r->nframes = nf;
        if (nodes) {
            uint32_t node;
            int rc = pl_stacknodes_path(pcs, nf, &node, emit_node, &bt);
            if (rc == 0) {
                err = add_stack(&bt, r, node, b->kind);
                continue;
            }
            if (rc != -ENOSPC) {
                err = rc;
                break;
            }
            /* The node table is full: this stack goes whole, as before. */
        }
        for (uint32_t f = 0; f < nf; f++) {
            uint64_t pc = pcs[f];
            memcpy(rec.raw + sizeof(*r) + f * sizeof(uint64_t), &pc, sizeof(pc));
        }
        uint32_t len = (uint32_t)(sizeof(*r) + nf * sizeof(uint64_t));
        if (b->kind != HI_KIND_MALLOC) { /* malloc buckets go as older agents sent them */
            struct hi_snap_bucket_ext ext = { b->kind, 0 };
            memcpy(rec.raw + len, &ext, sizeof(ext));
            len += (uint32_t)sizeof(ext);
        }
        err = send(ctx, HI_MSG_SNAP_BUCKET, rec.raw, len);
    }
    if (!err && nodes)
        err = flush_stacks(&bt);
    if (nodes)
        pl_stacknodes_end();
    if (err)
        return err;

    if ((err = send_maps(send, ctx)))
        return err;
    struct hi_snap_end end = { nb };
    return send(ctx, HI_MSG_SNAP_END, &end, sizeof(end));
}
