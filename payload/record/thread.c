/* thread.c - the registry of per-thread slots and the TLS slow path. */
#include "payload/record/thread.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "payload/record/stack_span.h"
#include "payload/sys/sys.h"

__thread struct pl_tls pl_tls __attribute__((tls_model("initial-exec")));

static struct pl_thread *pl_threads;       /* PL_MAX_THREADS slots, mmap'ed once */
static pl_lock_t pl_threads_lock;          /* used/tid/session of slots, claims, snapshots */
static unsigned pl_threads_hint;           /* next slot to try (pl_threads_lock) */
static struct pl_thread_tallies pl_exited; /* atomics; folded exited threads of this session */
static pthread_key_t pl_thread_key;
static int pl_thread_ready;
/* Which slots are used, a bit each (pl_threads_lock): a start in a fork
 * child frees the parent's in O(used), never reading the 3.5 MiB of
 * slots. */
static uint64_t pl_threads_used[PL_MAX_THREADS / 64];
/* The process the used slots belong to (raw getpid; pl_threads_lock). */
static pid_t pl_threads_pid;

/* A thread's own tid without a system call (issue 25: a thread that
 * installs a seccomp filter of its own killing gettid, then allocates
 * before anyone noticed, died in our first hook's gettid; so did any
 * filtered thread at exit, in the key destructor's ownership check).
 * glibc keeps the kernel's tid in its struct pthread (the thread
 * pointer): clone writes it there (CLONE_CHILD_SETTID / CLONE_PARENT_SETTID),
 * and so does fork in the child (glibc's _Fork passes &self->tid as the
 * child tid). Its offset is no ABI, so it is found: the offsets in the
 * first 1 KiB of the starting thread's struct that hold its tid
 * (pl_thread_init), of which the agent keeps the first that holds its own
 * different tid too (pl_thread_mark_agent). Until then, or when no offset
 * holds both, gettid as before. A child of a raw fork (syscall(SYS_fork),
 * clone without CHILD_SETTID) keeps its parent thread's tid there, as it
 * keeps that thread's slot: its counts go to its own copy of the tables,
 * which nothing reads. */
#define PL_TID_SCAN 1024u
#define PL_TID_CANDS 8u
static int32_t pl_tid_off = -1;                 /* confirmed offset, or -1 */
static uint16_t pl_tid_cands[PL_TID_CANDS];     /* offsets holding the starter's tid */
static unsigned pl_tid_ncands;
static pid_t pl_tid_starter;

static void tid_candidates(void)
{
    const unsigned char *self = (const unsigned char *)pthread_self();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    pl_tid_ncands = 0;
    pl_tid_starter = tid;
    for (unsigned off = 0; off < PL_TID_SCAN && pl_tid_ncands < PL_TID_CANDS; off += 4) {
        int32_t v;
        memcpy(&v, self + off, sizeof(v));
        if (v == tid)
            pl_tid_cands[pl_tid_ncands++] = (uint16_t)off;
    }
}

static void tid_confirm(void)
{
    const unsigned char *self = (const unsigned char *)pthread_self();
    pid_t tid = (pid_t)syscall(SYS_gettid);
    if (pl_tid_off >= 0 || tid == pl_tid_starter)
        return;
    for (unsigned i = 0; i < pl_tid_ncands; i++) {
        int32_t v;
        memcpy(&v, self + pl_tid_cands[i], sizeof(v));
        if (v == tid) {
            __atomic_store_n(&pl_tid_off, (int32_t)pl_tid_cands[i], __ATOMIC_RELEASE);
            return;
        }
    }
}

pid_t pl_thread_own_tid(void)
{
    int32_t off = __atomic_load_n(&pl_tid_off, __ATOMIC_ACQUIRE);
    if (off >= 0) {
        int32_t v;
        memcpy(&v, (const unsigned char *)pthread_self() + off, sizeof(v));
        return v;
    }
    return (pid_t)syscall(SYS_gettid);
}

int pl_thread_tid_offset(void)
{
    return __atomic_load_n(&pl_tid_off, __ATOMIC_ACQUIRE);
}

uint32_t pl_busy;

int pl_busy_drain(uint64_t max_ns)
{
    uint64_t end = pl_now_ns() + max_ns;
    unsigned spins = 0;
    while (__atomic_load_n(&pl_busy, __ATOMIC_SEQ_CST)) {
        if (pl_now_ns() > end)
            return -1;
        if (++spins > 64)
            sched_yield();
        else
            __builtin_ia32_pause();
    }
    return 0;
}

static void mark_used(struct pl_thread *th, int used)
{
    size_t i = (size_t)(th - pl_threads);
    if (used)
        pl_threads_used[i / 64] |= 1ull << (i % 64);
    else
        pl_threads_used[i / 64] &= ~(1ull << (i % 64));
}

/* Whether th is the calling thread's own slot in this process: a fork
 * child's copy of its forking thread's slot is not (the registry was
 * cleared by a start there, or the tid differs). */
static int slot_is_mine(const struct pl_thread *th)
{
    return __atomic_load_n(&th->used, __ATOMIC_ACQUIRE) && th->tid == (int32_t)pl_thread_own_tid();
}

/* Tallies are sums: folding one into another adds field by field. */
static void counters_add_atomic(struct pl_thread_tallies *dst, const struct pl_thread_tallies *src)
{
    const uint64_t *s = (const uint64_t *)src;
    uint64_t *d = (uint64_t *)dst;
    for (size_t i = 0; i < sizeof(*src) / sizeof(uint64_t); i++) {
        uint64_t v = __atomic_load_n(&s[i], __ATOMIC_RELAXED);
        if (v)
            __atomic_fetch_add(&d[i], v, __ATOMIC_RELAXED);
    }
}

/* Calls first, then bytes (struct pl_tally says why). */
static void tally_load(uint64_t *calls, uint64_t *bytes, const struct pl_tally *src)
{
    struct pl_tally t;
    t.calls = __atomic_load_n(&src->calls, __ATOMIC_ACQUIRE);
    t.chunk_calls = __atomic_load_n(&src->chunk_calls, __ATOMIC_ACQUIRE);
    t.chunk_mmapped = __atomic_load_n(&src->chunk_mmapped, __ATOMIC_ACQUIRE);
    t.bytes = __atomic_load_n(&src->bytes, __ATOMIC_ACQUIRE);
    t.chunk_bytes = __atomic_load_n(&src->chunk_bytes, __ATOMIC_ACQUIRE);
    *calls = t.calls + t.chunk_calls;
    *bytes = pl_tally_usable_bytes(&t);
}

/* The counters of tallies another thread may be writing. */
static void counters_load(struct pl_thread_counters *dst, const struct pl_thread_tallies *src)
{
    tally_load(&dst->alloc_calls, &dst->alloc_bytes, &src->alloc);
    tally_load(&dst->free_calls, &dst->free_bytes, &src->free);
    for (unsigned c = 0; c < HI_HIST_CLASSES; c++) {
        uint64_t fp = __atomic_load_n(&src->hist_objs_fp[c], __ATOMIC_RELAXED);
        dst->hist_calls[c] = (fp + PL_OBJ_FP_ONE / 2) >> PL_OBJ_FP_SHIFT;
        dst->hist_bytes[c] = __atomic_load_n(&src->hist_bytes[c], __ATOMIC_RELAXED);
    }
}

static void counters_zero(struct pl_thread_tallies *c)
{
    uint64_t *d = (uint64_t *)c;
    for (size_t i = 0; i < sizeof(*c) / sizeof(uint64_t); i++)
        __atomic_store_n(&d[i], 0, __ATOMIC_RELAXED);
}

/* Key destructor: runs at thread exit with the slot as argument. Later
 * hooked calls on this thread (other destructors, TLS teardown) go to the
 * aggregate, so the slot can be reused at once. */
static void pl_thread_exit(void *arg)
{
    struct pl_thread *th = arg;
    struct pl_tls *t = &pl_tls;
    pl_guard_enter(t);
    pl_lock(&pl_threads_lock);
    if (slot_is_mine(th)) { /* else freed by a start in a fork child */
        if (th->session == __atomic_load_n(&pl_session_id, __ATOMIC_RELAXED))
            counters_add_atomic(&pl_exited, &th->c);
        counters_zero(&th->c);
        th->tid = 0;
        th->session = 0;
        mark_used(th, 0);
        __atomic_store_n(&th->used, 0, __ATOMIC_RELEASE);
    }
    pl_unlock(&pl_threads_lock);
    t->self = NULL;
    t->dead = PL_TLS_EXITED;
    pl_guard_leave(t, 0);
}

int pl_thread_init(void)
{
    if (pl_thread_ready)
        return 0;
    pl_threads = pl_arena_map(sizeof(struct pl_thread) * PL_MAX_THREADS);
    if (!pl_threads)
        return -ENOMEM;
    int err = pthread_key_create(&pl_thread_key, pl_thread_exit);
    if (err)
        return -err;
    pl_threads_pid = pl_raw_getpid();
    tid_candidates();
    pl_thread_ready = 1;
    return 0;
}

void pl_thread_new_session(void)
{
    counters_zero(&pl_exited);
    if (!pl_threads)
        return;
    /* A fork child's first start: the used slots are its parent's threads
     * (its forking thread's included: it claims a new one, slot_is_mine). */
    pl_lock(&pl_threads_lock);
    if (pl_threads_pid != pl_raw_getpid()) {
        for (unsigned w = 0; w < PL_MAX_THREADS / 64; w++)
            while (pl_threads_used[w]) {
                unsigned i = w * 64 + (unsigned)__builtin_ctzll(pl_threads_used[w]);
                counters_zero(&pl_threads[i].c);
                pl_threads[i].tid = 0;
                pl_threads[i].session = 0;
                __atomic_store_n(&pl_threads[i].used, 0, __ATOMIC_RELEASE);
                pl_threads_used[w] &= pl_threads_used[w] - 1;
            }
        pl_threads_pid = pl_raw_getpid();
    }
    pl_unlock(&pl_threads_lock);
}

void pl_thread_mark_agent(void)
{
    struct pl_tls *t = &pl_tls;
    t->dead = PL_TLS_AGENT;
    t->guard = 1;
    t->key = 0;
    tid_confirm();
    pl_stack_span_learn();
}

static struct pl_thread *claim_slot(void)
{
    struct pl_thread *th = NULL;
    pl_lock(&pl_threads_lock);
    for (unsigned i = 0; i < PL_MAX_THREADS; i++) {
        unsigned idx = (pl_threads_hint + i) % PL_MAX_THREADS;
        if (!((pl_threads_used[idx / 64] >> (idx % 64)) & 1)) {
            th = &pl_threads[idx];
            th->used = 1;
            th->tid = (int32_t)pl_thread_own_tid();
            th->session = 0;
            mark_used(th, 1);
            pl_threads_hint = idx + 1;
            break;
        }
    }
    pl_unlock(&pl_threads_lock);
    return th;
}

static void release_slot(struct pl_thread *th)
{
    pl_lock(&pl_threads_lock);
    counters_zero(&th->c);
    mark_used(th, 0);
    __atomic_store_n(&th->used, 0, __ATOMIC_RELEASE);
    pl_unlock(&pl_threads_lock);
}

int pl_thread_enter_slow(struct pl_tls *t)
{
    uint64_t live = pl_key_load();
    if (live == PL_KEY_OFF || t->guard)
        return PL_ENTER_FORWARD;
    if (t->dead)
        return t->dead == PL_TLS_AGENT ? PL_ENTER_FORWARD : PL_ENTER_AGGREGATE;

    int saved_errno = errno;
    pl_guard_enter(t);
    if (!pl_busy_enter()) { /* the hooks went off meanwhile: a filter may be on its way */
        pl_guard_leave(t, 0);
        errno = saved_errno;
        return PL_ENTER_FORWARD;
    }
    struct pl_thread *th = t->self;
    if (th && !slot_is_mine(th))
        th = t->self = NULL; /* a fork child's copy of its parent's slot */
    if (!th && pl_thread_ready) {
        th = claim_slot();
        /* pthread_setspecific may calloc its second-level array: the guard
         * sends that call straight to the allocator. */
        if (th && pthread_setspecific(pl_thread_key, th) != 0) {
            release_slot(th);
            th = NULL;
        }
        t->self = th;
        if (!th)
            t->dead = PL_TLS_NOSLOT;
    }
    uint32_t session = (uint32_t)(live >> 32);
    if (th && th->session != session) {
        pl_lock(&pl_threads_lock);
        counters_zero(&th->c);
        th->session = session;
        pl_unlock(&pl_threads_lock);
    }
    /* A new session or a new rate: draw the countdown at the current rate. */
    uint64_t rate = __atomic_load_n(&pl_session_rate, __ATOMIC_RELAXED);
    if (t->smp.rng == 0)
        pl_sample_init(&t->smp, pl_now_ns() ^ ((uint64_t)(uint32_t)pl_thread_own_tid() << 32) ^ (uintptr_t)t, rate);
    else {
        t->smp.rate = rate ? rate : 1;
        t->smp.countdown = pl_sample_next_interval(&t->smp);
    }
    pl_busy_leave();
    pl_guard_leave(t, th ? live : 0);
    errno = saved_errno;
    return th ? PL_ENTER_FAST : PL_ENTER_AGGREGATE;
}

void pl_thread_aggregate_alloc(uint64_t n, uint64_t usable)
{
    unsigned sc = pl_size_class(n);
    __atomic_fetch_add(&pl_exited.alloc.bytes, usable, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_exited.alloc.calls, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_exited.hist_objs_fp[sc], PL_OBJ_FP_ONE, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_exited.hist_bytes[sc], usable, __ATOMIC_RELAXED);
}

void pl_thread_aggregate_free(uint64_t usable)
{
    __atomic_fetch_add(&pl_exited.free.bytes, usable, __ATOMIC_RELAXED);
    __atomic_fetch_add(&pl_exited.free.calls, 1, __ATOMIC_RELAXED);
}

unsigned pl_thread_snapshot(struct pl_thread_view *out, unsigned max)
{
    unsigned n = 0;
    if (max == 0)
        return 0;
    uint32_t session = __atomic_load_n(&pl_session_id, __ATOMIC_RELAXED);
    pl_lock(&pl_threads_lock);
    for (unsigned i = 0; pl_threads && i < PL_MAX_THREADS && n + 1 < max; i++) {
        struct pl_thread *th = &pl_threads[i];
        if (!((pl_threads_used[i / 64] >> (i % 64)) & 1) || th->session != session)
            continue;
        out[n].tid = th->tid;
        out[n].alive = 1;
        counters_load(&out[n].c, &th->c);
        n++;
    }
    out[n].tid = 0;
    out[n].alive = 0;
    counters_load(&out[n].c, &pl_exited);
    n++;
    pl_unlock(&pl_threads_lock);
    return n;
}

void pl_thread_release_unused(void)
{
    if (!pl_threads)
        return;
    const size_t pg = (size_t)sysconf(_SC_PAGESIZE), slot = sizeof(struct pl_thread);
    const size_t total = slot * PL_MAX_THREADS;
    uintptr_t base = (uintptr_t)pl_threads; /* page aligned: an arena */
    /* Pages with no registered thread's slot read back as zeros, which is
     * what an unused slot is. Runs of them go in one call each: dropped
     * page by page, the kernel (6.18, anonymous memory in large folios)
     * kept them resident. */
    size_t run = (size_t)-1;
    pl_lock(&pl_threads_lock);
    for (size_t off = 0; off <= total; off += pg) {
        bool busy = off == total; /* the end closes the last run */
        size_t first = off / slot, last = (off + pg - 1) / slot;
        for (size_t i = first; !busy && i <= last && i < PL_MAX_THREADS; i++)
            busy = (pl_threads_used[i / 64] >> (i % 64)) & 1; /* the bitmap: no read of the page */
        if (!busy && run == (size_t)-1)
            run = off;
        if (busy && run != (size_t)-1) {
            size_t end = off < total ? off : (total + pg - 1) / pg * pg;
            madvise((void *)(base + run), end - run, MADV_DONTNEED);
            run = (size_t)-1;
        }
    }
    pl_unlock(&pl_threads_lock);
}

void pl_thread_release_child(void)
{
    if (!pl_threads)
        return;
    /* No slot here is a thread of this process (slot_is_mine): zero pages. */
    pl_arena_clear(pl_threads, sizeof(struct pl_thread) * PL_MAX_THREADS);
    memset(pl_threads_used, 0, sizeof(pl_threads_used));
    pl_threads_pid = pl_raw_getpid();
}

/* In the child only the forking thread exists, and nothing reads the
 * registry until a session starts there (a hook forwards while the key is
 * off): the slots of the parent's threads are left as they are, and the
 * next start in the child frees them (pl_thread_new_session, which knows
 * by the pid). Touching them here read or zeroed 4,096 slots (3.5 MiB)
 * in every child, 24x the time of a fork. Only the lock's word, and only
 * when a parent thread held it. */
PL_FORK_TEXT void pl_thread_atfork_child(void)
{
    if (__atomic_load_n(&pl_threads_lock.held, __ATOMIC_RELAXED))
        pl_threads_lock.held = 0;
}
