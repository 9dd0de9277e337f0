/* start.c - heapinject_start / heapinject_stop, the first start's setup,
 * fork, and the test interface. The session's state is session.c's.
 *
 * The library stays loaded after stop (-z nodelete): its tables stay
 * mapped (a hook still running from the old session may touch them) and
 * are cleared by the next start.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <time.h>

#include "common/config.h"
#include "common/proto.h"
#include "payload/sys/sys.h"
#include "payload/interpose/interpose.h"
#include "payload/record/record.h"
#include "payload/python/python.h"
#include "payload/serve/agent.h"
#include "payload/serve/fatal.h"
#include "payload/serve/fork_follow.h"
#include "payload/serve/last_keep.h"
#include "payload/serve/last_snapshot.h"
#include "payload/serve/lazy_agent.h"
#include "payload/serve/leave.h"
#include "payload/serve/single_again.h"
#include "payload/serve/teardown.h"
#include "payload/serve/snapshot.h"

#define PL_EXPORT __attribute__((visibility("default")))

static int pl_initialized;  /* start lock */

static int start_in_child(const struct hi_config *cfg);

/* fork(): without following (the default), the child has no agent
 * thread. Its hooks become plain forwards, its copies of our locks (maybe
 * held by a thread that does not exist in the child) are never taken by a
 * hook; a later start in the child resets them. Following (follow=1), the
 * child starts a session of its own here, before fork returns to it, with
 * empty tables and its parent's patched slots (fork_follow.h). */
PL_FORK_TEXT static void pl_atfork_child(void)
{
    /* Forked during a session: the child's copies of our tables, shared
     * with the parent until it detaches, would then be the child's alone
     * (a server's workers each carried them). Detached, they were released
     * already: loads only, nothing written in the child. */
    int in_session = pl_state_get() != PL_IDLE;
    int follow = pl_follow_wanted();
    pl_lazy_agent_atfork_child();
    pl_session_atfork_child();
    pl_agent_atfork_child();
    pl_thread_atfork_child();
    pl_bucket_atfork_child();
    pl_addrmap_atfork_child();
    pl_maptrack_atfork_child();
    pl_modules_atfork_child(follow);
    pl_py_sample_atfork_child(follow);
    pl_last_keep_atfork_child();
    if (in_session) {
        pl_session_release_tables(follow);
        pl_thread_release_child();
    }
    if (follow)
        pl_seccomp_watch_atfork_child();
    struct hi_config cfg;
    if (follow && (pl_follow_child_config(&cfg) != 0 || start_in_child(&cfg) != HI_START_OK)) {
        /* No session here after all: the slots go back, as without
         * following (no handler of ours stays: fatal.c's runs next). */
        pl_modules_atfork_child(0);
    }
}

/* fork(), in the parent before it: memory and the vDSO's clock only (it
 * runs in every fork for good, after a detach too). */
static void pl_atfork_prepare(void)
{
    pl_last_fork_prepare();
    pl_single_atfork_prepare();
}

/* Descriptors a session needs at once: the listening socket, the wake-up
 * eventfd, the pidfd on the cli, the cli's connection, one /proc read. */
#define PL_START_FDS 5

/* Whether n descriptors can be opened now (opened and closed again). */
static int fds_free(int n)
{
    int fd[PL_START_FDS], k = 0;
    while (k < n && k < PL_START_FDS && (fd[k] = eventfd(0, EFD_CLOEXEC)) >= 0)
        k++;
    int ok = k == n;
    while (k > 0)
        close(fd[--k]);
    return ok;
}

static int init_once(void)
{
    if (pl_initialized)
        return 0;
    if (pl_thread_init() || pl_bucket_init() || pl_addrmap_init() || pl_maptrack_init() || pl_snapshot_init())
        return HI_START_ENOMEM;
    pl_leave_init();
    if (pl_stack_init() || pl_modules_init())
        return HI_START_ENOSLOTS;
    if (pthread_atfork(pl_atfork_prepare, pl_follow_atfork_parent, pl_atfork_child) != 0)
        return HI_START_ENOMEM;
    pl_initialized = 1;
    return 0;
}

/* The body of heapinject_start, on whatever thread runs it. With
 * agent_later, the agent thread is left to the caller (start_agent). */
/* A new session's tables: empty. */
static void reset_tables(void)
{
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    pl_hooks_mmap_reset();
    pl_arena_budget_reset();
    pl_thread_new_session();
    __atomic_store_n(&pl_dropped, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_walks_unkept, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_stack_truncated, 0, __ATOMIC_RELAXED); /* per session, as the samples */
}

/* What every session remembers of its settings, once the hooks are live. */
static void remember(const struct hi_config *cfg)
{
    pl_follow_remember(cfg);
    pl_last_remember(cfg, pl_agent_wake);
}

static int start_here(const char *config, int agent_later)
{
    struct hi_config cfg;
    if (hi_config_parse(config, &cfg) != 0 || cfg.version != HI_PROTO_VERSION)
        return HI_START_EBADCONFIG;

    /* Our own calls into libc (dlsym, pthread_create...) may allocate:
     * the guard forwards them unaccounted. */
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    int ret = HI_START_OK;
    pl_session_lock();
    if (pl_state_get() != PL_IDLE) {
        ret = HI_START_EALREADY;
        goto out;
    }
    if ((ret = init_once()) != 0)
        goto out;

    /* A fork child of an attached process still has hooked slots: put
     * them back before forgetting the records. */
    pl_modules_restore_all();
    pl_modules_reset();
    reset_tables();
    pl_py_sample_new_session(); /* the Python frames' counts, as the samples */

    /* A process (nearly) out of descriptors would get hooks and an agent
     * that cannot accept the cli or watch it: refuse before patching. */
    if (!fds_free(PL_START_FDS)) {
        ret = HI_START_ENOFDS;
        goto out;
    }
    int lerr = pl_agent_listen(&cfg);
    if (lerr != 0) {
        ret = lerr == -EMFILE || lerr == -ENFILE ? HI_START_ENOFDS : HI_START_ESOCKET;
        goto out;
    }

    pl_session_begin(cfg.rate);
    pl_hooks_floor = (int)cfg.floor;
    remember(&cfg);

    /* mmap and dlsym slots alone (a statically linked allocator still
     * maps through libc) are no allocator to profile. */
    pl_modules_patch_new();
    if (pl_modules_malloc_slots_patched() == 0) {
        ret = HI_START_ENOSLOTS;
        goto undo;
    }
    if (agent_later)
        goto out;
    if (pl_agent_start(0) != 0) {
        ret = HI_START_ETHREAD;
        goto undo;
    }
    goto out;

undo:
    pl_session_abort();
    pl_agent_close();
out:
    pl_session_unlock();
    pl_guard_leave(t, saved_key);
    return ret;
}

/* The fork child's session (pl_atfork_child), on its only thread, before
 * fork returns there. Unlike start_here: no dl_iterate_phdr (glibc's fork
 * does not reset the loader's dl_load_write_lock, which a parent thread
 * may have held: a C++ throw walks it), so the parent's patched slots and
 * module records are kept as they are, already ours; and no restore on
 * failure (the caller puts the slots back without the loader). The tables
 * were released by the caller: reset_tables only zeroes counters. */
static int start_in_child(const struct hi_config *cfg)
{
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    int ret = HI_START_ENOSLOTS;
    pl_session_lock();
    reset_tables();
    if (pl_modules_malloc_slots_patched() == 0)
        goto out;
    /* No check of free descriptors (start_here's 5 eventfds and closes,
     * 0.75% of a PostgreSQL server's CPU under `pgbench -C`): the child
     * has its parent's table, which had room at the attach, less the
     * parent agent's descriptors it closed; the hooks are there already
     * (the check is to refuse before patching); a listen without one
     * fails cleanly (the slots go back), and so does a later accept or
     * /proc read (accept_clients sleeps on EMFILE). Lazily (follow=2): no
     * socket and no thread yet (lazy_agent.h). */
    int lazy = cfg->follow == HI_FOLLOW_LAZY;
    ret = HI_START_ENOFDS;
    int lerr = lazy ? 0 : pl_agent_listen(cfg);
    if (lerr != 0) {
        ret = lerr == -EMFILE || lerr == -ENFILE ? HI_START_ENOFDS : HI_START_ESOCKET;
        goto out;
    }
    pl_session_begin(cfg->rate);
    remember(cfg);
    pl_last_child_session(pl_bucket_count, pl_agent_unlink_socket, lazy ? pl_lazy_agent_claim_exit : NULL);
    if (lazy) {
        /* Its unwind misses go to the parent from the first sample, as
         * a child's with an agent (pl_agent_start does it then): a
         * backend that ends before its agent computed ~55 rules and
         * faulted their pages each time (138 extra faults per pgbench
         * connection against 62). */
        pl_cfi_hints_as_child();
        pl_lazy_agent_arm(cfg);
    } else if (pl_agent_start(1) != 0) {
        __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
        pl_fatal_uninstall();
        pl_state_set(PL_IDLE);
        pl_agent_close();
        ret = HI_START_ETHREAD;
        goto out;
    }
    ret = HI_START_OK;
out:
    pl_session_unlock();
    pl_guard_leave(t, saved_key);
    return ret;
}

struct start_job {
    const char *config;
    int ret;
};

static void *start_thread(void *arg)
{
    struct start_job *j = arg;
    j->ret = start_here(j->config, 1);
    return NULL;
}

/* The agent thread, made by the thread that called heapinject_start, not
 * by the start helper: pthread_create callocs the new thread's TLS vector
 * through the program's allocator, and jemalloc gives a thread's first
 * allocation an arena of its own while it has arenas to spare, with a
 * background thread for it that stays after detach (redis: 5 threads
 * before attach, 6 after). The calling thread has its arena already. */
static int start_agent(void)
{
    int ret = HI_START_OK;
    pl_session_lock();
    if (pl_state_get() != PL_RUNNING) {
        /* Stopped meanwhile (heapinject_stop): no agent will close down,
         * so do what it would have. */
        pl_agent_close();
        pl_session_agent_exited();
        ret = HI_START_ETHREAD;
    } else if (pl_agent_start(0) != 0) {
        pl_session_abort();
        pl_agent_close();
        ret = HI_START_ETHREAD;
    }
    pl_session_unlock();
    return ret;
}

/* The injector calls this on the thread it holds, and watches every
 * system call that thread makes (two ptrace stops each, a round trip to
 * the cli: about 20 us each on a quiet machine, far more on a busy one).
 * The start makes about a hundred (tables, socket, GOT pages): run on a
 * thread of its own, which nobody traces, they cost what they cost
 * anywhere, and the held thread makes a few dozen (issue 17: 4 of the
 * 15 ms of an attach; the agent thread is made here, see start_agent).
 * The helper blocks every signal, as the agent does, and is joined before
 * we return. Should no thread be created, the start runs here. */
#define START_STACK_BYTES (1u << 20) /* as the agent's: glibc puts the TCB and static TLS in it */
#define START_GUARD_BYTES 4096u

PL_EXPORT int heapinject_start(const char *config)
{
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t); /* pthread_create may allocate */
    pl_single_note_start(); /* before our first thread makes glibc's flags false */
    struct start_job j = { config, HI_START_ETHREAD };
    pthread_t th;
    sigset_t all, old;
    pthread_attr_t attr;
    /* The helper's stack is ours, unmapped once it is joined: a stack
     * glibc made would stay in its cache of dead threads' stacks, 8 MiB
     * of the process's address space after detach, its words pointers to
     * the program's blocks that a later census takes for a root. */
    void *stack = mmap(NULL, START_STACK_BYTES + START_GUARD_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    int err = stack == MAP_FAILED ? EAGAIN : pthread_attr_init(&attr);
    if (err == 0) {
        mprotect(stack, START_GUARD_BYTES, PROT_NONE);
        err = pthread_attr_setstack(&attr, (char *)stack + START_GUARD_BYTES, START_STACK_BYTES);
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        if (err == 0)
            err = pthread_create(&th, &attr, start_thread, &j);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        pthread_attr_destroy(&attr);
    }
    if (err == 0) {
        pthread_join(th, NULL); /* the kernel's last write to the stack (the tid) is done */
        if (j.ret == HI_START_OK)
            j.ret = start_agent();
    }
    if (stack != MAP_FAILED)
        munmap(stack, START_STACK_BYTES + START_GUARD_BYTES);
    pl_guard_leave(t, saved_key);
    return err == 0 ? j.ret : start_here(config, 0);
}

PL_EXPORT int heapinject_stop(void)
{
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    int ret = pl_session_stop();
    if (ret == 0) {
        pl_agent_wake();
        /* Wait (bounded) for the agent to close the socket, so a start
         * right after this one succeeds. */
        struct timespec ts = { 0, 2000000 };
        for (int i = 0; i < 2500 && pl_state_get() != PL_IDLE; i++)
            nanosleep(&ts, NULL);
    }
    pl_guard_leave(t, saved_key);
    return ret;
}

/* Test interface: a text description of the session and every slot. */
PL_EXPORT long heapinject_test_state(char *buf, unsigned long len)
{
    if (!buf || len == 0)
        return -EINVAL;
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    struct pl_buf b;
    pl_buf_init(&b, buf, len);
    static const char *const names[] = { "idle", "running", "stopping" };
    pl_buf_str(&b, "state=");
    pl_buf_str(&b, names[pl_state_get() % 3]);
    pl_buf_str(&b, " session=");
    pl_buf_u64(&b, pl_session_id);
    pl_buf_str(&b, " rate=");
    pl_buf_u64(&b, pl_session_rate);
    pl_buf_str(&b, " slots=");
    pl_buf_u64(&b, pl_initialized ? pl_modules_slots_patched() : 0);
    pl_buf_str(&b, " modules=");
    pl_buf_u64(&b, pl_initialized ? pl_modules_modules_patched() : 0);
    pl_buf_str(&b, " dropped=");
    pl_buf_u64(&b, __atomic_load_n(&pl_dropped, __ATOMIC_RELAXED));
    pl_buf_str(&b, " unrestored=");
    pl_buf_u64(&b, (uint64_t)pl_session_unrestored());
    pl_buf_str(&b, " live_samples=");
    pl_buf_u64(&b, pl_initialized ? pl_addrmap_count() : 0);
    pl_buf_str(&b, "\n");
    size_t pos = b.pos;
    if (pl_initialized && pos + 1 < len)
        pos += pl_modules_describe(buf + pos, len - pos);
    pl_guard_leave(t, saved_key);
    return (long)pos;
}
