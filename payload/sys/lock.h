/* lock.h - a tiny spin lock for the payload's tables.
 *
 * Critical sections under these locks are a few dozen instructions and are
 * only entered with the thread's reentrancy guard held (thread.h), so a
 * signal handler on the same thread never tries to take a lock its thread
 * already holds. A waiter spins briefly, then yields: with two cores and a
 * preempted holder, spinning alone would burn the waiter's time slice.
 */
#ifndef HI_PAYLOAD_LOCK_H
#define HI_PAYLOAD_LOCK_H

#include <sched.h>

typedef struct {
    int held;
} pl_lock_t;

static inline void pl_lock(pl_lock_t *l)
{
    unsigned spins = 0;
    while (__atomic_exchange_n(&l->held, 1, __ATOMIC_ACQUIRE)) {
        while (__atomic_load_n(&l->held, __ATOMIC_RELAXED)) {
            if (++spins > 64)
                sched_yield();
            else
                __builtin_ia32_pause();
        }
    }
}

static inline void pl_unlock(pl_lock_t *l)
{
    __atomic_store_n(&l->held, 0, __ATOMIC_RELEASE);
}

#endif /* HI_PAYLOAD_LOCK_H */
