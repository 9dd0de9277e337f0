/* thread.h - per-thread state: TLS fast-path state, the registry of thread
 * slots with exact counters, the reentrancy guard.
 *
 * TLS is initial-exec and small (80 bytes): a dlopen'ed library's default
 * TLS model calls __tls_get_addr, which can allocate, which recurses.
 * Counters live in a slot of an mmap'ed registry so the agent can read them
 * (not in TLS: a thread that vanished without running its key destructor
 * would leave the agent a pointer into freed memory); only the owning
 * thread writes its slot's counters (one add to memory each, no lock
 * prefix), the agent reads them racily (64-bit loads). A pthread key
 * destructor folds a slot into the "exited" aggregate when its thread ends
 * and frees the slot.
 */
#ifndef HI_PAYLOAD_THREAD_H
#define HI_PAYLOAD_THREAD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/proto.h"
#include "payload/record/sample.h"
#include "payload/record/session.h"

#define PL_MAX_THREADS 4096u

/* One direction (allocations or frees) of a thread's exact counts, as the
 * hooks write them. Families whose usable size is a call (or unknown) add
 * it to calls/bytes. glibc families add the chunk size from the block's
 * header (its size word & ~7: a load and an and) to chunk_*, and count
 * mmapped chunks in chunk_mmapped (a rarely taken branch): the usable size
 * is chunksize - 8, - 16 when mmapped (family.h), so
 *     usable bytes = chunk_bytes - 8 * (chunk_calls + chunk_mmapped),
 * computed where the counters are read (pl_thread_snapshot), not on every
 * call. The hooks write bytes before calls, the reader reads calls first:
 * it never sees the bytes of fewer calls than it counted. */
struct pl_tally {
    uint64_t calls, bytes;
    uint64_t chunk_calls, chunk_bytes, chunk_mmapped;
};

/* What the hooks write for one thread (the owner thread only). */
struct pl_thread_tallies {
    struct pl_tally alloc, free;
    /* The size histogram, written by the sampled path only (issue 17: 22
     * of 116 instructions a malloc+free pair went to an exact histogram):
     * each sample adds its estimated objects (1/p, PL_OBJ_FP_ONE units) and
     * estimated usable bytes to the class of its requested size. Exact at
     * rate 1, where every allocation is a sample of weight 1. */
    uint64_t hist_objs_fp[HI_HIST_CLASSES];
    uint64_t hist_bytes[HI_HIST_CLASSES];
};

/* A thread's counters as snapshots see them (pl_thread_snapshot). */
struct pl_thread_counters {
    uint64_t alloc_bytes, alloc_calls; /* usable bytes of successful allocations */
    uint64_t free_bytes, free_calls;   /* usable bytes of freed blocks */
    uint64_t hist_calls[HI_HIST_CLASSES]; /* estimated from samples (see above) */
    uint64_t hist_bytes[HI_HIST_CLASSES];
};

/* One registry slot, on cache lines of its own: two threads' counters
 * never share a line. `used`, `tid`, `session` change under the registry
 * lock; counters are written by the owner thread only. */
struct pl_thread {
    uint32_t used;
    int32_t tid;
    uint32_t session; /* counters belong to this session */
    uint32_t pad;
    struct pl_thread_tallies c;
} __attribute__((aligned(64)));

/* Thread-local fast-path state. */
struct pl_tls {
    uint64_t key;           /* == pl_live_key when the fast path may run; 0 inside the guard */
    struct pl_sampler smp;
    struct pl_thread *self; /* registry slot, NULL before the first hooked call */
    uintptr_t stk_lo, stk_hi; /* span of this thread's stack walks (stack.c), 0 until learnt */
    uint32_t guard;         /* inside the payload: nested calls only forward */
    uint32_t dead;          /* PL_TLS_*: no slot (exiting, registry full, agent) */
    uint32_t stk_retry;     /* samples off the known span until it is learnt again */
    uint32_t walks;         /* stacks walked, for the periodic module check (stack.c) */
};

enum {
    PL_TLS_LIVE = 0,
    PL_TLS_EXITED = 1,  /* key destructor ran: counters go to the aggregate */
    PL_TLS_NOSLOT = 2,  /* registry was full */
    PL_TLS_AGENT = 3,   /* the agent thread: never accounted */
};

extern __thread struct pl_tls pl_tls __attribute__((tls_model("initial-exec")));

/* Power-of-two size class [2^i, 2^(i+1)); 0 bytes is class 0. */
static inline unsigned pl_size_class(uint64_t n)
{
    unsigned c = 63u - (unsigned)__builtin_clzll(n | 1);
    return c < HI_HIST_CLASSES ? c : HI_HIST_CLASSES - 1;
}

/* Owner-only increment that the agent may read concurrently: one add to
 * memory, which no other core can see half done (an aligned 8-byte
 * access), with no lock prefix (no other thread writes it). volatile
 * keeps the order of the adds as written (see struct pl_tally). */
static inline void pl_counter_add(uint64_t *c, uint64_t v)
{
#if defined(__x86_64__)
    __asm__ volatile("addq %1, %0" : "+m"(*c) : "er"(v));
#else
    __atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
#endif
}

/* A block of a family with its own usable size (or none known). */
static inline void pl_tally_usable(struct pl_tally *s, uint64_t usable)
{
    pl_counter_add(&s->bytes, usable);
    pl_counter_add(&s->calls, 1);
}

/* A block of a glibc family, by its chunk header word (family.h). */
/* pl_counter_add(c, hdr & ~7), the mask done in place (in the asm, where
 * the compiler cannot hoist it above the test of hdr and keep a copy). */
static inline void pl_counter_add_chunk(uint64_t *c, uint64_t hdr)
{
#if defined(__x86_64__)
    __asm__ volatile("andq $-8, %1\n\taddq %1, %0" : "+m"(*c), "+r"(hdr));
#else
    pl_counter_add(c, hdr & ~(uint64_t)7);
#endif
}

static inline void pl_tally_chunk(struct pl_tally *s, uint64_t hdr)
{
    if (__builtin_expect(hdr & 2, 0)) { /* IS_MMAPPED */
        pl_counter_add_chunk(&s->chunk_bytes, hdr);
        pl_counter_add(&s->chunk_mmapped, 1);
    } else {
        pl_counter_add_chunk(&s->chunk_bytes, hdr);
    }
    pl_counter_add(&s->chunk_calls, 1);
}

/* Usable bytes of a tally (a racy copy is fine, see struct pl_tally). */
static inline uint64_t pl_tally_usable_bytes(const struct pl_tally *s)
{
    return s->bytes + s->chunk_bytes - 8 * (s->chunk_calls + s->chunk_mmapped);
}

/* The sampled path: a sample of `n` requested bytes, `usable` usable ones,
 * weight est_objs_fp (1/p in PL_OBJ_FP_ONE units) into the histogram. */
static inline void pl_thread_hist_sample(struct pl_thread *th, uint64_t n, uint64_t usable, uint64_t est_objs_fp)
{
    unsigned sc = pl_size_class(n);
    pl_counter_add(&th->c.hist_objs_fp[sc], est_objs_fp);
    pl_counter_add(&th->c.hist_bytes[sc],
                   (uint64_t)(((unsigned __int128)usable * est_objs_fp + PL_OBJ_FP_ONE / 2) >> PL_OBJ_FP_SHIFT));
}

/* Enters the payload on this thread: nested hooked calls (from libunwind,
 * the loader, a signal handler) see key 0 and go straight to the original.
 * Returns the key to give back to pl_guard_leave. */
static inline uint64_t pl_guard_enter(struct pl_tls *t)
{
    uint64_t k = t->key;
    t->key = 0;
    t->guard = 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    return k;
}

static inline void pl_guard_leave(struct pl_tls *t, uint64_t key)
{
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->guard = 0;
    t->key = key;
}

/* Modes returned by pl_thread_enter. */
enum {
    PL_ENTER_FORWARD = 0,  /* detached or nested: only call the original */
    PL_ENTER_FAST = 1,     /* t->self is valid: account and sample */
    PL_ENTER_AGGREGATE = 2 /* no slot: count into the aggregate (atomics) */
};

int pl_thread_enter_slow(struct pl_tls *t);

/* The calling thread's kernel tid, read from glibc's struct pthread once
 * its offset is known (thread.c says how it is found and checked), else
 * gettid(2): the hooks make no system call for it. */
pid_t pl_thread_own_tid(void);

/* The offset of the tid in struct pthread, or -1 while not known. */
int pl_thread_tid_offset(void);

/* Threads inside a path of the hooks that may make system calls (the
 * slow entry, a sample's stack walk and tables). A thread about to
 * install a seccomp filter turns the hooks off, then waits for this to
 * reach 0 (pl_busy_drain) before the filter goes in (interpose/
 * hooks_sandbox.c): no hook of ours then meets the filter. A path enters
 * with pl_busy_enter, which counts first and looks at the key after (the
 * installer stores the key first and reads the count after; both
 * sequentially consistent: one of them sees the other). */
extern uint32_t pl_busy __attribute__((visibility("hidden")));

/* 1: counted, go on; 0: the hooks are off, drop the work (the
 * program's call is done already or is forwarded). */
static inline int pl_busy_enter(void)
{
    __atomic_fetch_add(&pl_busy, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pl_live_key, __ATOMIC_SEQ_CST) == PL_KEY_OFF) {
        __atomic_fetch_sub(&pl_busy, 1, __ATOMIC_RELEASE);
        return 0;
    }
    return 1;
}

static inline void pl_busy_leave(void)
{
    __atomic_fetch_sub(&pl_busy, 1, __ATOMIC_RELEASE);
}

/* Waits, at most max_ns, until no thread is inside such a path: 0, or -1
 * when the time ran out (a thread stopped inside one). */
int pl_busy_drain(uint64_t max_ns);

/* Decides how a hooked call on this thread is accounted. Inline fast check:
 * one TLS load and one global load. */
static inline int pl_thread_enter(struct pl_tls *t)
{
    if (__builtin_expect(t->key == pl_key_load(), 1))
        return PL_ENTER_FAST;
    return pl_thread_enter_slow(t);
}

/* Counting for threads without a slot (atomics into the aggregate; its
 * histogram counts these calls exactly: nothing samples them). */
void pl_thread_aggregate_alloc(uint64_t n, uint64_t usable);
void pl_thread_aggregate_free(uint64_t usable);

/* One-time setup: maps the registry, creates the pthread key. 0 or -errno. */
int pl_thread_init(void);

/* New session: clears the exited aggregate (slots reset lazily). */
void pl_thread_new_session(void);

/* Gives back to the kernel the pages of the thread registry that hold no
 * registered thread's slot (the session ended). */
void pl_thread_release_unused(void);

/* Marks the calling thread as the agent: every hooked call only forwards. */
void pl_thread_mark_agent(void);

/* A copy of one thread's counters for a snapshot. */
struct pl_thread_view {
    int32_t tid;      /* 0 for the exited aggregate */
    uint32_t alive;
    struct pl_thread_counters c;
};

/* Copies the slots of the current session and, last, the exited aggregate
 * (always present) into out[0..max). Returns the number of views. */
unsigned pl_thread_snapshot(struct pl_thread_view *out, unsigned max);

/* In a child forked during a session: the registry's pages go back to the
 * kernel (none of its slots is a thread of the child). */
void pl_thread_release_child(void);

/* In a fork child: unlocks the registry and frees the slots of threads
 * that do not exist in the child. */
void pl_thread_atfork_child(void);


#endif /* HI_PAYLOAD_THREAD_H */
