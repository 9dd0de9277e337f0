/* lock.h - a tiny lock for the payload's tables.
 *
 * Critical sections under these locks are a few dozen instructions and are
 * only entered with the thread's reentrancy guard held (thread.h), so a
 * signal handler on the same thread never tries to take a lock its thread
 * already holds. A waiter spins briefly, then sleeps in a futex wait: with
 * two cores and a preempted holder, spinning alone would burn the waiter's
 * time slice. The wait used to be sched_yield, a call a seccomp filter
 * installed with the raw instruction after attach may kill (issue 25: the
 * sampled path's locks); a futex wait is what glibc's own malloc makes
 * when its arena lock is contended, so a threaded program that allocates
 * allows it. The word: 0 free, 1 held, 2 held with a waiter (the unlock
 * then wakes one).
 */
#ifndef HI_PAYLOAD_LOCK_H
#define HI_PAYLOAD_LOCK_H

#include <linux/futex.h>
#include <sys/syscall.h>

typedef struct {
    int held;
} pl_lock_t;

/* futex(2) by the instruction: no errno, no libc slot. */
static inline void pl_lock_futex(int *word, int op, int val)
{
    long r;
    register long r10 __asm__("r10") = 0; /* no timeout */
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)SYS_futex), "D"(word), "S"((long)op), "d"((long)val), "r"(r10)
                     : "rcx", "r11", "memory");
    (void)r;
}

static inline int pl_trylock(pl_lock_t *l)
{
    int free = 0;
    return __atomic_compare_exchange_n(&l->held, &free, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static __attribute__((noinline, cold, unused)) void pl_lock_wait(pl_lock_t *l)
{
    for (unsigned spins = 0; spins < 64; spins++) {
        __builtin_ia32_pause();
        if (!__atomic_load_n(&l->held, __ATOMIC_RELAXED) && pl_trylock(l))
            return;
    }
    while (__atomic_exchange_n(&l->held, 2, __ATOMIC_ACQUIRE) != 0)
        pl_lock_futex(&l->held, FUTEX_WAIT_PRIVATE, 2);
}

static inline void pl_lock(pl_lock_t *l)
{
    if (__builtin_expect(!pl_trylock(l), 0))
        pl_lock_wait(l);
}

static inline void pl_unlock(pl_lock_t *l)
{
    if (__builtin_expect(__atomic_exchange_n(&l->held, 0, __ATOMIC_RELEASE) == 2, 0))
        pl_lock_futex(&l->held, FUTEX_WAKE_PRIVATE, 1);
}

#endif /* HI_PAYLOAD_LOCK_H */
