/* session.c - the state of the attach session: the key the hooks read,
 * the rate, the start lock, and the way from running to idle.
 *
 * The start lock serializes start, stop and rate changes; the hooks never
 * take it. start.c (heapinject_start/stop) and the agent both use this
 * file and not each other's: the agent asks for a stop here, and whoever
 * stops the session from outside the agent wakes it (pl_agent_wake).
 */
#include "payload/record/session.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "common/config.h"
#include "payload/record/addrmap.h"
#include "payload/record/bucket.h"
#include "payload/record/cfi.h"
#include "payload/sys/clock.h"
#include "payload/serve/fatal.h"
#include "payload/interpose/hooks_mmap.h"
#include "payload/serve/leave.h"
#include "payload/record/maptrack.h"
#include "payload/interpose/modules.h"
#include "payload/sys/seccomp_watch.h"
#include "payload/serve/snapshot.h"
#include "payload/record/thread.h"

uint64_t pl_live_key = PL_KEY_OFF;
uint32_t pl_session_id;
uint64_t pl_session_rate = HI_DEFAULT_RATE;
uint64_t pl_attach_ns;
uint64_t pl_dropped;
uint64_t pl_walks_unkept;

static pthread_mutex_t pl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static int pl_state;         /* enum pl_state, atomic */
static uint32_t pl_rate_gen; /* start lock */
/* Slots the last restore could not put back (start lock): 0 normally. A
 * slot left hooked stays a plain forward (pl_live_key is off), and the
 * cli, which reads every slot through /proc/PID/mem after a detach, names
 * it; shown in heapinject_test_state. */
static int pl_unrestored;

int pl_state_get(void)
{
    return __atomic_load_n(&pl_state, __ATOMIC_ACQUIRE);
}

int pl_session_unrestored(void)
{
    return pl_unrestored;
}

void pl_session_lock(void)
{
    pthread_mutex_lock(&pl_start_lock);
}

void pl_session_unlock(void)
{
    pthread_mutex_unlock(&pl_start_lock);
}

static uint64_t make_key(uint32_t session, uint32_t gen)
{
    return ((uint64_t)session << 32) | gen;
}

void pl_session_begin(uint64_t rate)
{
    pl_session_id++;
    pl_rate_gen = 1;
    __atomic_store_n(&pl_session_rate, rate, __ATOMIC_RELAXED);
    pl_attach_ns = pl_now_ns();
    __atomic_store_n(&pl_state, PL_RUNNING, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);
}

void pl_session_abort(void)
{
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    pl_unrestored = pl_modules_restore_all();
    pl_fatal_uninstall();
    __atomic_store_n(&pl_state, PL_IDLE, __ATOMIC_RELEASE);
}

void pl_session_set_rate(uint64_t rate)
{
    pthread_mutex_lock(&pl_start_lock);
    /* Sealed (a seccomp filter came after attach): the hooks stay off. */
    if (pl_state_get() == PL_RUNNING && !pl_seccomp_sealed()) {
        __atomic_store_n(&pl_session_rate, rate, __ATOMIC_RELAXED);
        pl_rate_gen++;
        __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pl_start_lock);
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
    /* A seccomp filter installed after attach that forbids mprotect:
     * the slots stay plain forwards here, and the cli puts them back
     * through /proc/PID/mem (it knows where from the gate). */
    if (pl_seccomp_recheck(HI_GATE_MPROTECT))
        pl_unrestored = pl_modules_restore_all();
    else
        pl_unrestored = (int)pl_modules_slots_patched();
    /* The fatal signals get SIG_DFL back where our handler still is. */
    pl_fatal_uninstall();
    pthread_mutex_unlock(&pl_start_lock);
    return 0;
}

void pl_session_release_tables(void)
{
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    pl_hooks_mmap_reset();
    pl_cfi_flush();
    pl_snapshot_release();
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
    pl_session_release_tables();
    pl_thread_release_unused();
    pl_leave_release_text();
    __atomic_store_n(&pl_state, PL_IDLE, __ATOMIC_RELEASE);
}

/* Detached, each of these is already so: loads only, no page of ours
 * copied into the child. */
void pl_session_atfork_child(void)
{
    if (pl_key_load() != PL_KEY_OFF)
        __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELAXED);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    if (memcmp(&pl_start_lock, &fresh, sizeof(fresh)) != 0)
        memcpy(&pl_start_lock, &fresh, sizeof(fresh));
    if (pl_state_get() != PL_IDLE)
        pl_state = PL_IDLE;
}
