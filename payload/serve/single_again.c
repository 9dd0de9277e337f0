/* single_again.c - glibc's single-threaded flags put back after a detach
 * (see single_again.h).
 *
 * The flags (glibc 2.32 and later; read from glibc 2.36's source and
 * checked on this machine's build):
 * - __libc_single_threaded, public: libstdc++ reads it (shared_ptr's
 *   counts without atomics). A program that names it can own a copy of it
 *   (copy relocation), so pthread_create writes two bytes: this copy
 *   (dlsym(RTLD_DEFAULT)) and libc's own (__libc_single_threaded_internal,
 *   a hidden alias of libc's definition: dlsym on libc's own handle).
 * - libc's own byte is SINGLE_THREAD_P on x86_64 (SINGLE_THREAD_BY_GLOBAL):
 *   fork (arenas, stdio list, nss, timers locked and reset around it),
 *   malloc (the arena lock instead of its single-threaded path), stdio's
 *   and pthread_mutex's fast paths, cancellation points.
 * - THREAD_SELF->header.multiple_threads (the TCB, %fs:24 on x86_64): the
 *   lock prefix of glibc's catomic_* operations, and ld.so's
 *   SINGLE_THREAD_P. Per thread: pthread_create sets the creator's and
 *   every new thread's. Written only when what we read before and after
 *   our threads were made matches that layout (0 in the held thread, 1 in
 *   the agent's), else left.
 * - stdio's stdio_needs_locking and each FILE's _IO_FLAGS2_NEED_LOCK: a
 *   static of libc's and flags a program may rely on (flockfile): left.
 *
 * When: the program's only thread is the one running fork when our
 * prepare handler runs, at its first fork after the detach. Nothing of
 * ours runs in that thread at the detach itself, and from any other
 * thread (the agent, or the cli through /proc/PID/mem) a reset would race
 * with a pthread_create in progress, which writes the flags before it
 * makes its thread. Alone is read from glibc's own lists of threads
 * (GL(dl_stack_used) for stacks it made, GL(dl_stack_user) for the main
 * thread and given stacks, in ld.so's _rtld_global): a thread that can
 * run code of glibc's is on one of them from before its clone until its
 * exit call but for one window: a thread on its way out takes itself off
 * (__nptl_deallocate_stack) and then may still free its TLS (free()),
 * all under GL(dl_stack_cache_lock); a joined thread is taken off by its
 * joiner once the kernel cleared its tid. Only a thread on them can make
 * another. The calling thread alone on them, and then that lock free (a
 * thread off the lists in that window holds it): no other thread can be
 * in malloc or about to be made, so the single-threaded paths are right
 * from here, as in a process that never had a thread. No system call: a
 * seccomp filter the program installs after the detach meets none of ours.
 * The list fields' places are found by their links and checked at attach
 * (the node after which the thread's tid follows, linked to a head inside
 * _rtld_global), not assumed; in_flight and the lock are taken where
 * glibc 2.34 to today's keep them after the heads (used +0, user +16,
 * cache +32, the cache's size +48, in_flight +56, the lock +64: 4,264 to
 * 4,328 of 4,336 bytes here), only when the two heads found are at their
 * places in that order. x86_64 only (the TCB is read through %fs).
 */
#include "payload/serve/single_again.h"

#if defined(__x86_64__)

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "payload/record/record.h"

/* How far into struct pthread the list node is looked for (glibc 2.36:
 * 704, after the TCB header and its padding). */
#define SA_LIST_SEARCH_BYTES 2048u
/* header.multiple_threads: tcb, dtv, self, then this int. */
#define SA_TCB_MULTI_OFFSET 24

struct single_again {
    int armed;                  /* noted single-threaded at a start; cleared once done or given up */
    volatile char *pub, *own;   /* __libc_single_threaded: the program's view, libc's own */
    uintptr_t rtld_lo, rtld_hi; /* _rtld_global */
    size_t list_off;            /* struct pthread's list node */
    uintptr_t user_head;        /* GL(dl_stack_user) */
    uintptr_t used_head;        /* GL(dl_stack_used), from the agent (atomic) */
    uintptr_t in_flight, lock;  /* GL(dl_in_flight_stack), GL(dl_stack_cache_lock) */
    int tcb_zero_before;        /* the held thread's %fs:24 read 0 at the start */
    int tcb_ok;                 /* ... and the agent's read 1: it is header.multiple_threads (atomic) */
};
static struct single_again sa;

static uintptr_t tcb_word(unsigned off)
{
    uintptr_t v;
    __asm__ volatile("movq %%fs:(%1), %0" : "=r"(v) : "r"((uintptr_t)off));
    return v;
}

static int tcb_multi(void)
{
    int v;
    __asm__ volatile("movl %%fs:%c1, %0" : "=r"(v) : "i"(SA_TCB_MULTI_OFFSET));
    return v;
}

static void tcb_multi_clear(void)
{
    __asm__ volatile("movl $0, %%fs:%c0" : : "i"(SA_TCB_MULTI_OFFSET) : "memory");
}

/* This thread's descriptor: the TCB's self pointer, which is also where
 * %fs points and what pthread_self returns (x86_64: TCB at the thread
 * pointer); 0 if they disagree. */
static uintptr_t self_descr(void)
{
    uintptr_t tp = tcb_word(0), self = tcb_word(16);
    return tp == self && self == (uintptr_t)pthread_self() ? self : 0;
}

static uintptr_t word(uintptr_t at)
{
    return *(volatile uintptr_t *)at;
}

static int in_rtld(uintptr_t p)
{
    return p >= sa.rtld_lo && p + 16 <= sa.rtld_hi && (p & 7) == 0;
}

/* A list of two: node and its head (in _rtld_global), linked both ways. */
static int pair_with_head(uintptr_t node, uintptr_t *head)
{
    uintptr_t next = word(node), prev = word(node + 8);
    if (next != prev || !in_rtld(next) || word(next) != node || word(next + 8) != node)
        return 0;
    *head = next;
    return 1;
}

/* GL(dl_stack_cache): a head linked both ways with its neighbours. */
static int cache_list(uintptr_t head)
{
    uintptr_t next = word(head), prev = word(head + 8);
    return in_rtld(head) && next && prev && word(next + 8) == head && word(prev) == head;
}

static int find_rtld(void)
{
    void *p = dlsym(RTLD_DEFAULT, "_rtld_global");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!p || !dladdr1(p, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size < 64)
        return 0;
    sa.rtld_lo = (uintptr_t)p;
    sa.rtld_hi = (uintptr_t)p + sym->st_size;
    return 1;
}

/* The list node in this thread's descriptor: the one word pair linked
 * alone with a head in _rtld_global and followed by this thread's tid. */
static int find_list_node(uintptr_t self, pid_t tid)
{
    size_t found = 0, off_found = 0;
    for (size_t off = 16; off + 24 <= SA_LIST_SEARCH_BYTES; off += 8) {
        uintptr_t head;
        if (pair_with_head(self + off, &head) && *(volatile pid_t *)(self + off + 16) == tid) {
            found++;
            off_found = off;
            sa.user_head = head;
        }
    }
    if (found != 1)
        return 0;
    sa.list_off = off_found;
    return 1;
}

void pl_single_note_start(void)
{
    if (__atomic_load_n(&sa.armed, __ATOMIC_ACQUIRE))
        return; /* an earlier session's threads made the flags false: still ours to put back */
    char *pub = dlsym(RTLD_DEFAULT, "__libc_single_threaded");
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    char *own = libc ? dlsym(libc, "__libc_single_threaded") : NULL;
    if (libc)
        dlclose(libc);
    uintptr_t self = self_descr();
    if (!pub || !own || *pub != 1 || *own != 1 || !self || !find_rtld() ||
        !find_list_node(self, (pid_t)syscall(SYS_gettid)))
        return;
    sa.pub = pub;
    sa.own = own;
    sa.tcb_zero_before = tcb_multi() == 0;
    __atomic_store_n(&sa.used_head, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sa.armed, 1, __ATOMIC_RELEASE);
}

void pl_single_note_agent(void)
{
    if (!__atomic_load_n(&sa.armed, __ATOMIC_ACQUIRE) || __atomic_load_n(&sa.used_head, __ATOMIC_ACQUIRE))
        return;
    uintptr_t self = self_descr(), head;
    /* The agent alone on the list of stacks glibc made (the start helper
     * ran on a stack of ours, on the other list, and was joined). */
    if (self && pair_with_head(self + sa.list_off, &head) && sa.user_head == head + 16 && cache_list(head + 32) &&
        head + 64 + sizeof(int) <= sa.rtld_hi && *(volatile pid_t *)(self + sa.list_off + 16) == (pid_t)syscall(SYS_gettid)) {
        sa.in_flight = head + 56;
        sa.lock = head + 64;
        __atomic_store_n(&sa.tcb_ok, sa.tcb_zero_before && tcb_multi() == 1, __ATOMIC_RELAXED);
        __atomic_store_n(&sa.used_head, head, __ATOMIC_RELEASE);
    } else {
        __atomic_store_n(&sa.armed, 0, __ATOMIC_RELEASE); /* not the layout we know: never touched */
    }
}

void pl_single_atfork_prepare(void)
{
    if (!__atomic_load_n(&sa.armed, __ATOMIC_ACQUIRE) || pl_state_get() != PL_IDLE)
        return;
    uintptr_t used = __atomic_load_n(&sa.used_head, __ATOMIC_ACQUIRE);
    uintptr_t self = self_descr();
    if (!used || !self)
        return;
    if (*sa.own != 0) { /* single already (not by us): nothing left to do */
        __atomic_store_n(&sa.armed, 0, __ATOMIC_RELAXED);
        return;
    }
    uintptr_t node = self + sa.list_off, user = sa.user_head;
    int alone = word(used) == used && word(used + 8) == used && word(user) == node && word(user + 8) == node &&
                word(node) == user && word(node + 8) == user;
    if (!alone)
        return; /* another thread (the agent on its way out, or the program's): a later fork looks again */
    /* After the lists (x86: loads in order): a thread that took itself off
     * before our look and may still free its TLS holds the lock. */
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (*(volatile int *)sa.lock != 0 || word(sa.in_flight) != 0)
        return;
    *sa.own = 1;
    *sa.pub = 1;
    if (__atomic_load_n(&sa.tcb_ok, __ATOMIC_RELAXED))
        tcb_multi_clear();
    __atomic_store_n(&sa.armed, 0, __ATOMIC_RELAXED);
}

#else /* not x86_64: the flags are left as glibc leaves them */

void pl_single_note_start(void)
{
}

void pl_single_note_agent(void)
{
}

void pl_single_atfork_prepare(void)
{
}

#endif
