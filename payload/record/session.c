/* session.c - the state of the attach session: the key the hooks read,
 * the rate, the start lock. The way from running to idle (stop, restore,
 * the tables given back) is payload/serve/teardown.c's.
 *
 * The start lock serializes start, stop and rate changes; the hooks never
 * take it.
 */
#include "payload/record/session.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>

#include "common/config.h"
#include "payload/sys/sys.h"

uint64_t pl_live_key = PL_KEY_OFF;
uint32_t pl_session_id;
uint64_t pl_session_rate = HI_DEFAULT_RATE;
uint64_t pl_attach_ns;
uint64_t pl_dropped;
uint32_t pl_forked_copy;
uint64_t pl_walks_unkept;

static pthread_mutex_t pl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static int pl_state;         /* enum pl_state, atomic */
static uint32_t pl_rate_gen; /* start lock */
PL_FORK_TEXT int pl_state_get(void)
{
    return __atomic_load_n(&pl_state, __ATOMIC_ACQUIRE);
}

void pl_session_lock(void)
{
    pthread_mutex_lock(&pl_start_lock);
}

void pl_session_unlock(void)
{
    pthread_mutex_unlock(&pl_start_lock);
}

void pl_session_seal_hooks(int tid, int pid)
{
    /* Under the start lock, when it comes within 1 s: a start or a rate
     * change that looked at the bar before it was set would otherwise
     * store a live key after our off. */
    uint64_t end = pl_now_ns() + 1000000000ull;
    int locked;
    while (!(locked = pthread_mutex_trylock(&pl_start_lock) == 0) && pl_now_ns() < end)
        sched_yield();
    pl_seccomp_note_sandbox(tid, pid);
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_SEQ_CST);
    if (locked)
        pthread_mutex_unlock(&pl_start_lock);
}

static uint64_t make_key(uint32_t session, uint32_t gen)
{
    return ((uint64_t)session << 32) | gen;
}

void pl_state_set(int state)
{
    __atomic_store_n(&pl_state, state, __ATOMIC_RELEASE);
}

void pl_session_begin(uint64_t rate)
{
    pl_session_id++;
    pl_rate_gen = 1;
    __atomic_store_n(&pl_session_rate, rate, __ATOMIC_RELAXED);
    pl_attach_ns = pl_now_ns();
    __atomic_store_n(&pl_state, PL_RUNNING, __ATOMIC_RELEASE);
    pl_seccomp_forget_foreign();
    if (!pl_seccomp_hooks_barred()) /* a filter after attach: off for good */
        __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);
}

void pl_session_set_rate(uint64_t rate)
{
    pthread_mutex_lock(&pl_start_lock);
    /* Sealed (a seccomp filter came after attach, in any thread): the
     * hooks stay off. */
    if (pl_state_get() == PL_RUNNING && !pl_seccomp_hooks_barred()) {
        __atomic_store_n(&pl_session_rate, rate, __ATOMIC_RELAXED);
        pl_rate_gen++;
        __atomic_store_n(&pl_live_key, make_key(pl_session_id, pl_rate_gen), __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&pl_start_lock);
}

/* Detached, each of these is already so: loads only, no page of ours
 * copied into the child. */
PL_FORK_TEXT void pl_session_atfork_child(void)
{
    if (pl_key_load() != PL_KEY_OFF)
        __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELAXED);
    pthread_mutex_t fresh = PTHREAD_MUTEX_INITIALIZER;
    if (memcmp(&pl_start_lock, &fresh, sizeof(fresh)) != 0)
        memcpy(&pl_start_lock, &fresh, sizeof(fresh));
    if (pl_state_get() != PL_IDLE)
        pl_state = PL_IDLE;
}
