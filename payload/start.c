/* start.c - heapinject_start / heapinject_stop, session state, fork.
 *
 * The start lock serializes start, stop and rate changes; the hooks never
 * take it. The library stays loaded after stop (-z nodelete): its tables
 * stay mapped (a hook still running from the old session may touch them)
 * and are cleared by the next start.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <time.h>

#include "common/config.h"
#include "common/proto.h"
#include "payload/addrmap.h"
#include "payload/agent.h"
#include "payload/bucket.h"
#include "payload/cfi.h"
#include "payload/clock.h"
#include "payload/fmt.h"
#include "payload/hooks_mmap.h"
#include "payload/maptrack.h"
#include "payload/modules.h"
#include "payload/session.h"
#include "payload/snapshot.h"
#include "payload/stack.h"
#include "payload/start.h"
#include "payload/leave.h"
#include "payload/thread.h"

#define PL_EXPORT __attribute__((visibility("default")))

uint64_t pl_live_key = PL_KEY_OFF;
uint32_t pl_session_id;
uint64_t pl_session_rate = HI_DEFAULT_RATE;
uint64_t pl_attach_ns;
uint64_t pl_dropped;
/* Slots the last restore could not put back (start lock): 0 normally. A
 * slot left hooked stays a plain forward (pl_live_key is off), and the
 * cli, which reads every slot through /proc/PID/mem after a detach, names
 * it; shown in heapinject_test_state. */
static int pl_unrestored;

static pthread_mutex_t pl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static int pl_state;        /* enum pl_state, atomic */
static uint32_t pl_rate_gen; /* start lock */
static int pl_initialized;  /* start lock */

int pl_state_get(void)
{
    return __atomic_load_n(&pl_state, __ATOMIC_ACQUIRE);
}

static uint64_t make_key(uint32_t session, uint32_t gen)
{
    return ((uint64_t)session << 32) | gen;
}

void pl_session_set_rate(uint64_t rate)
{
    pthread_mutex_lock(&pl_start_lock);
    if (pl_state_get() == PL_RUNNING) {
        __atomic_store_n(&pl_session_rate, rate, __ATOMIC_RELAXED);
        pl_rate_gen++;
        __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pl_start_lock);
}

/* fork(): the child has no agent thread. Its hooks become plain forwards,
 * its copies of our locks (maybe held by a thread that does not exist in
 * the child) are never taken by a hook; a later start in the child resets
 * them. */
static void pl_atfork_child(void)
{
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELAXED);
    pl_agent_atfork_child();
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    memcpy(&pl_start_lock, &fresh, sizeof(fresh));
    pl_state = PL_IDLE;
    pl_thread_atfork_child();
    pl_bucket_atfork_child();
    pl_addrmap_atfork_child();
    pl_maptrack_atfork_child();
    pl_modules_atfork_child();
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
    /* Before the first unwind: libunwind must not open its pipe. */
    pl_leave_init();
    if (pl_stack_init() || pl_modules_init())
        return HI_START_ENOSLOTS;
    if (pthread_atfork(NULL, NULL, pl_atfork_child) != 0)
        return HI_START_ENOMEM;
    pl_initialized = 1;
    return 0;
}

int pl_session_stop(void)
{
    pthread_mutex_lock(&pl_start_lock);
    if (pl_state_get() != PL_RUNNING) {
        pthread_mutex_unlock(&pl_start_lock);
        return -ESRCH;
    }
    /* Hooks first become plain forwards (calls in flight included), then
     * the slots get their originals back. */
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_state, PL_STOPPING, __ATOMIC_RELEASE);
    pl_unrestored = pl_modules_restore_all();
    pthread_mutex_unlock(&pl_start_lock);
    pl_agent_wake();
    return 0;
}

void pl_session_agent_exited(void)
{
    /* Detach gives back what attach took: the tables' pages go back to the
     * kernel (a session at RATE=1 with 65,536 stacks left the target 41 MiB
     * larger for good). The resets take each table's lock, so a hook still
     * on its way out on another thread (the key is off: it only forwards
     * from here) finds either the old table or an empty one, never half of
     * each; MADV_DONTNEED pages read back as zeros, which every table
     * reads as empty. Before IDLE: no new session can start meanwhile. */
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    pl_hooks_mmap_reset();
    pl_cfi_flush();
    pl_snapshot_release();
    pl_thread_release_unused();
    pl_leave_release_text();
    __atomic_store_n(&pl_state, PL_IDLE, __ATOMIC_RELEASE);
}

PL_EXPORT int heapinject_start(const char *config)
{
    struct hi_config cfg;
    if (hi_config_parse(config, &cfg) != 0 || cfg.version != HI_PROTO_VERSION)
        return HI_START_EBADCONFIG;

    /* Our own calls into libc (dlsym, pthread_create...) may allocate:
     * the guard forwards them unaccounted. */
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    int ret = HI_START_OK;
    pthread_mutex_lock(&pl_start_lock);
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
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    pl_hooks_mmap_reset();
    pl_thread_new_session();
    __atomic_store_n(&pl_dropped, 0, __ATOMIC_RELAXED);

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

    pl_session_id++;
    pl_rate_gen = 1;
    __atomic_store_n(&pl_session_rate, cfg.rate, __ATOMIC_RELAXED);
    pl_attach_ns = pl_now_ns();
    __atomic_store_n(&pl_state, PL_RUNNING, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);

    /* mmap and dlsym slots alone (a statically linked allocator still
     * maps through libc) are no allocator to profile. */
    pl_modules_patch_new();
    if (pl_modules_malloc_slots_patched() == 0) {
        ret = HI_START_ENOSLOTS;
        goto undo;
    }
    if (pl_agent_start() != 0) {
        ret = HI_START_ETHREAD;
        goto undo;
    }
    goto out;

undo:
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    pl_unrestored = pl_modules_restore_all();
    pl_agent_close();
    __atomic_store_n(&pl_state, PL_IDLE, __ATOMIC_RELEASE);
out:
    pthread_mutex_unlock(&pl_start_lock);
    pl_guard_leave(t, saved_key);
    return ret;
}

PL_EXPORT int heapinject_stop(void)
{
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    int ret = pl_session_stop();
    if (ret == 0) {
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
    pl_buf_u64(&b, (uint64_t)pl_unrestored);
    pl_buf_str(&b, " live_samples=");
    pl_buf_u64(&b, pl_initialized ? pl_addrmap_count() : 0);
    pl_buf_str(&b, "\n");
    size_t pos = b.pos;
    if (pl_initialized && pos + 1 < len)
        pos += pl_modules_describe(buf + pos, len - pos);
    pl_guard_leave(t, saved_key);
    return (long)pos;
}
