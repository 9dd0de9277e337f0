/* lazy_agent.c - a followed fork child's agent started on its sampled path
 * once it has lived PL_LAZY_AGENT_MS (see lazy_agent.h). */
#include "payload/serve/lazy_agent.h"

#include <time.h>
#include <unistd.h>

#include "payload/interpose/interpose.h"
#include "payload/record/record.h"
#include "payload/serve/agent.h"
#include "payload/serve/fork_follow.h"
#include "payload/sys/sys.h"

enum {
    LAZY_NONE = 0,    /* no lazy agent: eager, or started */
    LAZY_ARMED = 1,   /* no agent yet; the sampled path may start it */
    LAZY_CLAIMED = 2, /* a thread is starting it, or the exit writes the file */
    LAZY_NEVER = 3,   /* its start failed: no agent; the exit writes the file */
};

/* Start lock writes cfg, pid and since before the state goes ARMED; the
 * state word is taken by compare-and-swap, so one thread alone starts the
 * agent or claims the exit. */
static struct {
    struct hi_config cfg;
    pid_t pid;        /* the child whose session it is */
    uint64_t since_ns; /* its fork */
} pl_lazy;
static int pl_lazy_state;

/* Whether starting a thread here, now, is safe and due. The sampled path
 * runs outside the allocator, inside our guard (never inside our own
 * code's locks); what remains is the loader: pthread_create takes
 * dl_load_tls_lock and readies the new thread's TLS from the loader's
 * slot info, which a thread inside dlopen or a TLS resize (holding one of
 * its locks: it may be this very thread, in a malloc the loader called)
 * is changing. Any of the loader's locks held: wait for a later sample. */
static int due(void)
{
    if (pl_now_ns() - pl_lazy.since_ns < PL_LAZY_AGENT_MS * 1000000ull)
        return 0;
    /* The session ending (heapinject_stop, a seal) or a filter being
     * installed through our slots: no thread, no socket now. */
    if (pl_state_get() != PL_RUNNING || pl_key_load() == PL_KEY_OFF || pl_seccomp_hooks_barred())
        return 0;
    return pl_raw_getpid() == pl_lazy.pid && !pl_follow_loader_busy();
}

/* pl_after_sample: on the program thread that took a sample. */
static void lazy_poll(void)
{
    int armed = LAZY_ARMED;
    if (!due() || !__atomic_compare_exchange_n(&pl_lazy_state, &armed, LAZY_CLAIMED, 0, __ATOMIC_ACQ_REL,
                                               __ATOMIC_RELAXED))
        return;
    __atomic_store_n(&pl_after_sample_due, 0, __ATOMIC_RELAXED);
    int ok = 0;
    pl_session_lock();
    /* The parent's session ended meanwhile (its detach found no socket
     * of this child to detach): the agent starts only to leave, as a
     * detach would have made it (slots restored, tables released). */
    int parent_gone = !pl_agent_parent_socket_there();
    if (pl_state_get() == PL_RUNNING && pl_agent_listen(&pl_lazy.cfg) == 0) {
        if (parent_gone)
            pl_agent_detach_at_start();
        ok = pl_agent_start(1) == 0;
        if (!ok)
            pl_agent_close();
    }
    pl_session_unlock();
    /* Failed: the hooks stay as they are (the session's data is kept for
     * the last snapshot, which the exiting thread writes). */
    __atomic_store_n(&pl_lazy_state, ok ? LAZY_NONE : LAZY_NEVER, __ATOMIC_RELEASE);
}

void pl_lazy_agent_arm(const struct hi_config *cfg)
{
    pl_lazy.cfg = *cfg;
    pl_lazy.pid = pl_raw_getpid();
    pl_lazy.since_ns = pl_now_ns();
    pl_after_sample = lazy_poll;
    __atomic_store_n(&pl_lazy_state, LAZY_ARMED, __ATOMIC_RELEASE);
    __atomic_store_n(&pl_after_sample_due, 1, __ATOMIC_RELEASE);
}

PL_FORK_TEXT void pl_lazy_agent_atfork_child(void)
{
    /* Loads first: the common case (never lazy) writes nothing. */
    if (__atomic_load_n(&pl_after_sample_due, __ATOMIC_RELAXED))
        __atomic_store_n(&pl_after_sample_due, 0, __ATOMIC_RELAXED);
    if (__atomic_load_n(&pl_lazy_state, __ATOMIC_RELAXED) != LAZY_NONE)
        __atomic_store_n(&pl_lazy_state, LAZY_NONE, __ATOMIC_RELAXED);
}

int pl_lazy_agent_claim_exit(void)
{
    /* Another thread starting the agent just now: its start is a few
     * system calls; waited for (100 ms at most), so that the exit knows
     * whether an agent (and the child's own socket) is there. */
    for (int i = 0;; i++) {
        int s = __atomic_load_n(&pl_lazy_state, __ATOMIC_ACQUIRE);
        if (s == LAZY_ARMED) {
            if (__atomic_compare_exchange_n(&pl_lazy_state, &s, LAZY_CLAIMED, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                __atomic_store_n(&pl_after_sample_due, 0, __ATOMIC_RELAXED);
                /* The parent's session ended (detached): so did this
                 * one; nobody would take a file. */
                return pl_agent_parent_socket_there() ? PL_LAZY_EXIT_WRITE : PL_LAZY_EXIT_NONE;
            }
            continue;
        }
        if (s == LAZY_CLAIMED && i < 1000) {
            struct timespec ts = { 0, 100000 };
            nanosleep(&ts, NULL);
            continue;
        }
        return s == LAZY_NEVER ? PL_LAZY_EXIT_WRITE : PL_LAZY_EXIT_AGENT;
    }
}

int pl_lazy_agent_pending(void)
{
    int s = __atomic_load_n(&pl_lazy_state, __ATOMIC_ACQUIRE);
    return s == LAZY_ARMED || s == LAZY_NEVER;
}
