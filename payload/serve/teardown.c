/* teardown.c - the way from running to idle: the hooks off and the slots
 * restored (stop, or a start whose setup failed), then, when the agent has
 * closed everything, the tables and our libraries' pages given back.
 *
 * start.c (heapinject_start/stop) and the agent both use this file and not
 * each other's: the agent asks for a stop here, and whoever stops the
 * session from outside the agent wakes it (pl_agent_wake). The session's
 * state itself (key, rate, start lock) is payload/record/session.c's.
 */
#include "payload/serve/teardown.h"

#include <errno.h>

#include "payload/interpose/interpose.h"
#include "payload/python/python.h"
#include "payload/record/record.h"
#include "payload/serve/fatal.h"
#include "payload/serve/leave.h"
#include "payload/serve/maps_cache.h"
#include "payload/serve/snapshot.h"
#include "payload/sys/sys.h"

/* Slots the last restore could not put back (start lock): 0 normally. A
 * slot left hooked stays a plain forward (pl_live_key is off), and the
 * cli, which reads every slot through /proc/PID/mem after a detach, names
 * it; shown in heapinject_test_state. */
static int pl_unrestored;

int pl_session_unrestored(void)
{
    return pl_unrestored;
}

void pl_session_abort(void)
{
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    pl_unrestored = pl_modules_restore_all();
    pl_fatal_uninstall();
    pl_state_set(PL_IDLE);
}

int pl_session_stop(void)
{
    pl_session_lock();
    if (pl_state_get() != PL_RUNNING) {
        pl_session_unlock();
        return -ESRCH;
    }
    /* Hooks first become plain forwards (calls in flight included), then
     * the slots get their originals back. */
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    pl_state_set(PL_STOPPING);
    /* A seccomp filter installed after attach that forbids mprotect:
     * the slots stay plain forwards here, and the cli puts them back
     * through /proc/PID/mem (it knows where from the gate). */
    if (pl_seccomp_recheck(HI_GATE_MPROTECT))
        pl_unrestored = pl_modules_restore_all();
    else
        pl_unrestored = (int)pl_modules_slots_patched();
    /* The fatal signals get SIG_DFL back where our handler still is. */
    pl_fatal_uninstall();
    pl_session_unlock();
    return 0;
}

void pl_session_release_tables(int keep_rules)
{
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    pl_hooks_mmap_reset();
    if (!keep_rules)
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
    pl_session_release_tables(0);
    pl_py_sample_release(); /* Python's code table: unmapped, not only emptied */
    pl_thread_release_unused();
    pl_leave_release_text();
    pl_maps_cache_release();
    pl_state_set(PL_IDLE);
}
