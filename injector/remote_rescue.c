/* remote_rescue.c - rescue mode of remote calls: the thread restores itself
 * should the injector die.
 *
 * Rescue mode. A faulting return address has one flaw: if the injector dies
 * during a call (SIGKILL, OOM killer, a closed terminal), the kernel detaches
 * the thread, the call returns into the fault, and the target crashes. So
 * when it can, a call returns through a signal frame that holds the saved
 * registers, as a signal handler does: the return address is the C
 * library's sigreturn trampoline (or our stub in a page we map, which first
 * copies rax where we can read it), and rt_sigreturn puts the thread back by
 * itself. We run the call under PTRACE_SYSCALL and catch that rt_sigreturn
 * at its entry. There, with no seccomp filter in the thread, we skip it
 * (orig_rax = -1) and set up the next call or put the saved registers back
 * ourselves, so the kernel's own restart of an interrupted syscall stays
 * exact. With a filter, skipping (syscall -1) could be refused or even kill
 * the process, so the rt_sigreturn runs, and the frame itself restarts an
 * interrupted syscall from its instruction (a relative sleep then starts
 * over: the only difference).
 *
 * The page must not outlive us either (68 KiB r-x, found left behind by
 * tests/e2e/rel_kill_cli.sh). With no seccomp filter, the stub unmaps it
 * on the way out: it stores rax in the frame's siginfo (rt_sigreturn does
 * not read it), then jumps to libc's munmap(page) with the trampoline as
 * return address, so nothing runs from the page after that syscall. The
 * frame itself is on the thread's stack, below the red zone, never on the
 * page. Alive, we catch that munmap at its entry and skip it as we skip
 * rt_sigreturn; the page goes at inj_call_end. Right after our mmap of
 * the page we park the thread at munmap(page) (INJ_AT_UNMAP). The mmap
 * itself starts at the syscall instruction inside glibc's munmap, with
 * munmap and then the trampoline as its way out, so our death inside it
 * takes the page too (where munmap is not glibc's bare wrapper, that one
 * call is a window that leaves the page). With a filter, we read the
 * filters (PTRACE_SECCOMP_GET_FILTER, which needs CAP_SYS_ADMIN) and run
 * them over the stub's munmap (injector/seccomp_eval.c): when every one
 * allows it, the page unmaps itself there too (Docker's default profile,
 * say). Only then the live injector cannot skip the stub's munmap (a
 * skipped syscall, number -1, goes through the filter, which may refuse
 * it, clobber rax or kill): it turns it into getpid (also evaluated), with
 * munmap(page) and the trampoline as the way out, and parks the thread at
 * its exit as after our mmap. A filter that forbids munmap or getpid,
 * reads the instruction pointer, or that we cannot read: the page stays,
 * as before. */
#include "injector/remote_call.h"
#include "injector/remote_call_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "injector/error.h"
#include "injector/log.h"
#include "injector/mem.h"
#include "injector/seccomp_eval.h"
#include "injector/target.h"

#include <linux/audit.h>

/* 1 if the thread runs under a seccomp filter (or we cannot tell), else 0. */
static int thread_has_seccomp(pid_t tid)
{
    struct inj_target_status st;

    return inj_target_status(tid, &st) != 0 || st.seccomp != 0;
}

/* Looks for the sigreturn trampoline in [lo, hi) of the target's memory. */
static int scan_restorer(struct inj_call *c, uint64_t lo, uint64_t hi, unsigned char *buf, size_t cap)
{
    /* Chunks overlap by 16 bytes so a pattern on a boundary is seen. */
    for (uint64_t a = lo; a < hi; a += cap) {
        size_t n = hi - a > cap + 16 ? cap + 16 : (size_t)(hi - a), end;
        long off;

        if (inj_mem_read(c->t->tid, a, buf, n))
            return -EFAULT;
        if ((off = inj_arch_find_restorer(buf, n, &end)) >= 0) {
            c->restorer = a + (uint64_t)off;
            c->restorer_ret = a + end;
            return 0;
        }
    }
    return -ENOENT;
}

/* Finds the sigreturn trampoline in the target's C library, reading its
 * code from the target's memory (what runs, even if the file changed).
 * glibc defines it right after sigaction (sigaction.c's RESTORE): the
 * 8 KiB around that symbol first, the whole code only if it is not there
 * (reading and scanning 1.6 MiB took about 1 ms of each attach). */
static int find_restorer(struct inj_call *c, const struct inj_maps *maps, const struct inj_libc *libc)
{
    size_t cap = 1 << 20;
    unsigned char *buf = malloc(cap + 16);
    int found = -ENOENT;

    if (!buf)
        return -ENOMEM;
    for (size_t i = 0; i < maps->n && found; i++) {
        const struct inj_map *m = &maps->v[i];

        if (m->perms[2] != 'x' || strcmp(m->path, libc->path))
            continue;
        if (libc->sigaction >= m->start + 4096 && libc->sigaction + 4096 <= m->end &&
            scan_restorer(c, libc->sigaction - 4096, libc->sigaction + 4096, buf, cap) == 0) {
            found = 0;
            break;
        }
        found = scan_restorer(c, m->start, m->end, buf, cap) == 0 ? 0 : -ENOENT;
    }
    free(buf);
    return found;
}

/* Our rt_sigreturn at its entry? (instruction pointer just past the
 * expected syscall, stack pointer just above the frame's slot) */
static bool at_our_sigreturn(const struct inj_call *c, const struct __ptrace_syscall_info *si,
                             uint64_t expect_ip)
{
    return si->op == PTRACE_SYSCALL_INFO_ENTRY && si->entry.nr == INJ_ARCH_NR_SIGRETURN &&
           si->instruction_pointer == expect_ip && si->stack_pointer == c->frame + 8;
}

/* The self-unmapping stub's munmap of our page, at its entry? Nothing
 * else unmaps exactly our page. */
static bool at_our_munmap(const struct inj_call *c, const struct __ptrace_syscall_info *si)
{
    return si->op == PTRACE_SYSCALL_INFO_ENTRY && si->entry.nr == INJ_ARCH_NR_MUNMAP &&
           si->entry.args[0] == c->page && si->entry.args[1] == c->page_len;
}

/* Under a seccomp filter, at the entry of the stub's munmap(page, len):
 * the syscall cannot be skipped (number -1 goes through the filter), so it
 * runs as getpid, which the filters allow (seccomp_allows_unmap) and which
 * leaves the page's address and length in rdi and rsi. munmap's `ret`
 * then takes munmap_fn from frame - 8, written first, which runs
 * munmap(page, len) and returns into the trampoline: should we die at any
 * point, the page goes. At getpid's exit the thread is set up to call
 * munmap(page) returning into the trampoline, as after our mmap. 0 or
 * -errno. */
static int seccomp_park_at_unmap(struct inj_call *c)
{
    struct inj_thread *t = c->t;
    uint64_t un[2] = { c->page, c->page_len };
    inj_gregs_t now;
    int r;

    r = inj_mem_write(t->tid, c->frame - 8, &c->munmap_fn, sizeof(c->munmap_fn));
    if (r)
        return r;
    if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == -1)
        return -errno;
    now.orig_rax = INJ_ARCH_NR_GETPID;
    now.rsp = c->frame - 8;
    if (ptrace(PTRACE_SETREGS, t->tid, NULL, &now) == -1)
        return -errno;
    r = inj_thread_resume_syscall(t);
    if (!r)
        r = inj_thread_wait(t, 10000); /* getpid returns at once */
    if (r)
        return r;
    if (t->stop != INJ_STOP_SYSCALL)
        return -EPROTO;
    return inj_arch_set_call(t->tid, &c->saved, c->munmap_fn, un, 2, c->frame);
}

int inj_rescue_run(struct inj_call *c, const char *what, uint64_t fn, const uint64_t *args,
                      int nargs, enum rescue_ret how, uint64_t *ret, char *err, size_t errlen)
{
    struct inj_thread *t = c->t;
    uint64_t ret_to = c->restorer, expect_ip = c->restorer_ret, sp = c->frame;
    bool in_mmap = false;
    int r, waited = 0;

    if (how == RET_STUB && !c->page)
        how = RET_RESTORER;
    if (how == RET_MAPPED && !c->self_unmap)
        how = RET_RESTORER;
    if (how == RET_STUB) {
        ret_to = c->page;
        if (c->self_unmap)
            sp = inj_arch_unmap_stub_sp(c->frame);
        else
            expect_ip = c->stub_ret;
    }
    /* The page's mmap from munmap's own syscall instruction: after the
     * syscall munmap's `ret` takes munmap_fn from frame - 8, which runs
     * munmap(page, len) (rdi and rsi are still the mmap's first two
     * arguments) and returns into the trampoline at the frame's slot. */
    bool via_munmap = how == RET_MAPPED && c->munmap_syscall;
    if (via_munmap) {
        ret_to = c->munmap_fn;
        sp = c->frame - 8;
    }
    c->crashed = false;
    *ret = 0;
    /* The return address first, then the registers: should we die in
     * between, the thread does what it would have done anyway. In
     * self-unmap mode the frame's slot always holds the trampoline (a
     * thread at INJ_AT_UNMAP returns through it; rewriting the same value
     * changes nothing) and calls into the stub return through a slot
     * below it. */
    r = inj_mem_write(t->tid, sp, &ret_to, sizeof(ret_to));
    if (!r && sp != c->frame)
        r = inj_mem_write(t->tid, c->frame, &c->restorer, sizeof(c->restorer));
    if (!r)
        r = via_munmap ? inj_arch_set_syscall(t->tid, &c->saved, c->munmap_syscall,
                                              INJ_ARCH_NR_MMAP, args, nargs, sp)
                       : inj_arch_set_call(t->tid, &c->saved, fn, args, nargs, sp);
    if (r)
        return inj_call_setup_failed(c, r, what, err, errlen);
    /* From here the thread is never in a state it cannot leave alone. */
    c->at = INJ_AT_TRAP;
    t->hold_signals = true;
    r = inj_thread_resume_syscall(t);
    while (r == 0) {
        int result;
        if ((r = inj_call_wait_stop(c, what, &waited)) != 0)
            break;
        if (t->stop == INJ_STOP_SYSCALL) {
            struct __ptrace_syscall_info si;

            memset(&si, 0, sizeof(si));
            if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(si), &si) <= 0) {
                r = -errno;
                break;
            }
            if (how == RET_STUB && c->self_unmap) {
                if (!at_our_munmap(c, &si)) {
                    r = inj_thread_resume_syscall(t);
                    continue;
                }
                /* The call is over and the stub on its way out: we skip
                 * its munmap (the next call or inj_call_end sets orig_rax
                 * to -1) and keep the page for the next call. */
                r = inj_mem_read(t->tid, inj_arch_unmap_stub_retval_addr(c->frame), ret,
                                 sizeof(*ret));
                if (!r && c->sigreturn_runs)
                    r = seccomp_park_at_unmap(c);
                if (r)
                    break;
                c->at = INJ_AT_UNMAP;
                t->hold_signals = false;
                return INJ_OK;
            }
            if (how == RET_MAPPED && si.op == PTRACE_SYSCALL_INFO_ENTRY &&
                si.entry.nr == INJ_ARCH_NR_MMAP && si.entry.args[0] == args[0] &&
                si.entry.args[1] == args[1]) {
                in_mmap = true;
                r = inj_thread_resume_syscall(t);
                continue;
            }
            if (how == RET_MAPPED && in_mmap && si.op == PTRACE_SYSCALL_INFO_EXIT) {
                in_mmap = false;
                if (!si.exit.is_error) {
                    /* Mapped. At once (the first thing after the stop),
                     * make the thread's way out munmap(page) returning
                     * into the trampoline, so that from now on our death
                     * takes the page with it. */
                    uint64_t un[2] = { (uint64_t)si.exit.rval, args[1] };

                    *ret = (uint64_t)si.exit.rval;
                    r = inj_arch_set_call(t->tid, &c->saved, c->munmap_fn, un, 2, c->frame);
                    if (r)
                        break;
                    c->at = INJ_AT_UNMAP;
                    t->hold_signals = false;
                    return INJ_OK;
                }
                *ret = (uint64_t)si.exit.rval; /* failed: back via the trampoline */
                if (via_munmap) {
                    /* Not through munmap's error path and munmap(page):
                     * a MAP_FIXED_NOREPLACE that failed with EEXIST means
                     * that range is someone else's now. */
                    r = inj_arch_set_call(t->tid, &c->saved, c->restorer, NULL, 0, c->frame + 8);
                    if (r)
                        break;
                }
                r = inj_thread_resume_syscall(t);
                continue;
            }
            if (!at_our_sigreturn(c, &si, expect_ip)) {
                r = inj_thread_resume_syscall(t);
                continue;
            }
            if (how == RET_STUB) {
                inj_gregs_t now;

                if (ptrace(PTRACE_GETREGS, t->tid, NULL, &now) == -1) {
                    r = -errno;
                    break;
                }
                *ret = inj_arch_stub_retval(&now);
            }
            c->at = INJ_AT_ENTRY;
            if (c->sigreturn_runs) {
                /* Let it restore the thread; the next stop is its exit. */
                r = inj_thread_resume_syscall(t);
                if (!r)
                    r = inj_thread_wait(t, 2000);
                if (!r && t->stop != INJ_STOP_SYSCALL)
                    r = -EPROTO;
                if (r)
                    break;
                c->at = INJ_AT_EXIT;
            }
            t->hold_signals = false;
            return INJ_OK;
        }
        if (inj_call_other_stop(c, what, &r, &result, err, errlen))
            return result;
    }
    return inj_call_wait_failed(c, r, what, err, errlen);
}

/* A page-aligned address far from where the kernel and the allocator put
 * things, for MAP_FIXED_NOREPLACE. */
static uint64_t random_hint(long page)
{
    struct timespec ts;
    uint64_t x;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid() << 20 ^ (uint64_t)ts.tv_sec;
    x ^= x >> 29;
    return (0x100000000000ull + (x % 0x200000000000ull)) & ~(uint64_t)(page - 1);
}

/* Whether no mapping of maps overlaps [start, start + len). The page's
 * mmap through munmap (inj_rescue_run, via_munmap) unmaps that range
 * should we die: it must be nobody's. */
static bool range_free(const struct inj_maps *maps, uint64_t start, uint64_t len)
{
    for (size_t i = 0; i < maps->n; i++)
        if (maps->v[i].start < start + len && maps->v[i].end > start)
            return false;
    return true;
}

/* The syscall instruction inside libc's munmap, when munmap is glibc's
 * bare wrapper (inj_arch_munmap_syscall_at), read from the target's memory;
 * else 0. */
static uint64_t find_munmap_syscall(pid_t tid, uint64_t munmap_fn)
{
    unsigned char code[64];
    long at;

    if (inj_mem_read(tid, munmap_fn, code, sizeof(code)))
        return 0;
    at = inj_arch_munmap_syscall_at(code, sizeof(code));
    return at < 0 ? 0 : munmap_fn + (uint64_t)at;
}

bool inj_rescue_mapped_exactly(pid_t tid, uint64_t start, uint64_t len)
{
    struct inj_maps m;
    bool ok = false;

    if (inj_maps_read(tid, &m))
        return false;
    const struct inj_map *x = inj_maps_find_addr(&m, start);
    ok = x && x->start == start && x->end == start + len && !x->path[0];
    inj_maps_free(&m);
    return ok;
}

/* Whether the thread's seccomp filters let munmap(page, len) run
 * unwatched, and getpid, which the stub's munmap becomes while we live
 * (seccomp_park_at_unmap). Anything we cannot read or vouch for: no. */
static bool seccomp_allows_unmap(struct inj_call *c, uint64_t page, uint64_t len)
{
    struct seccomp_data d = {
        .nr = INJ_ARCH_NR_MUNMAP,
        .arch = AUDIT_ARCH_X86_64,
        .instruction_pointer = 0, /* a filter that reads it is not trusted */
        .args = { page, len },
    };
    uint32_t a1 = 0, a2 = 0;
    int r;

    r = inj_seccomp_thread_action(c->t->tid, &d, &a1);
    if (!r) {
        d.nr = INJ_ARCH_NR_GETPID;
        r = inj_seccomp_thread_action(c->t->tid, &d, &a2);
    }
    if (r) {
        inj_log(c->verbose, "reading the seccomp filters of thread %d: %s (PTRACE_SECCOMP_GET_FILTER "
                "needs CAP_SYS_ADMIN): the rescue page stays should heapinject die", c->t->tid,
                strerror(-r));
        return false;
    }
    if (!hi_seccomp_allows(a1) || !hi_seccomp_allows(a2)) {
        inj_log(c->verbose, "the seccomp filters of thread %d do not allow munmap and getpid "
                "(action 0x%08x): the rescue page stays should heapinject die", c->t->tid,
                hi_seccomp_allows(a1) ? a2 : a1);
        return false;
    }
    inj_log(c->verbose, "the seccomp filters of thread %d allow munmap and getpid", c->t->tid);
    return true;
}

int inj_call_enable_rescue(struct inj_call *c, const struct inj_maps *maps,
                           const struct inj_libc *libc, char *err, size_t errlen)
{
    struct __ptrace_syscall_info si;
    struct inj_thread *t = c->t;
    unsigned char *img = NULL, stub[INJ_ARCH_UNMAP_STUB_MAX];
    size_t len, stub_end, stub_len;
    long page = sysconf(_SC_PAGESIZE);
    int r;

    if (!c->saved_ok || !c->have_sigmask || !libc->mmap || !libc->munmap || page <= 0) {
        inj_log(c->verbose, "no rescue frame (no signal mask or no mmap in libc)");
        return INJ_OK;
    }
    if (ptrace(PTRACE_GET_SYSCALL_INFO, t->tid, (void *)sizeof(si), &si) <= 0) {
        inj_log(c->verbose, "no rescue frame: PTRACE_GET_SYSCALL_INFO: %s (Linux < 5.3?)",
                strerror(errno));
        return INJ_OK;
    }
    if (find_restorer(c, maps, libc)) {
        inj_log(c->verbose, "no rescue frame: no sigreturn trampoline in %s", libc->path);
        return INJ_OK;
    }
    if ((long long)c->saved.gp.orig_rax == SYS_restart_syscall)
        /* Restored by rt_sigreturn (our death, or a seccomp filter), the
         * thread cannot continue through restart_syscall: the frame issues
         * the syscall it continues instead, from the start. */
        inj_log(c->verbose, "thread %d is in restart_syscall%s", t->tid,
                c->saved.restart_nr >= 0 ? ": the rescue frame restarts the syscall it continues"
                                         : " of an unknown syscall: restored by the rescue "
                                           "frame, it would see EINTR");
    r = inj_arch_rescue_frame(&c->saved, c->sigmask, c->scratch_lo, &img, &len, &c->frame);
    if (r) {
        inj_log(c->verbose, "no rescue frame: %s", strerror(-r));
        return INJ_OK;
    }
    r = inj_mem_write(t->tid, c->frame, img, len);
    free(img);
    if (r == -ESRCH)
        return inj_err(err, errlen, INJ_EEXITED, "pid %d exited while being injected", t->pid);
    if (r) {
        inj_log(c->verbose, "no rescue frame: writing it to the stack: %s", strerror(-r));
        return INJ_OK;
    }
    c->scratch_lo = c->frame; /* should we fall back, strings go below it */
    c->munmap_fn = libc->munmap;
    c->munmap_syscall = find_munmap_syscall(t->tid, libc->munmap);
    c->sigreturn_runs = thread_has_seccomp(t->tid);
    /* Self-unmapping needs munmap to run unwatched should we die: under a
     * seccomp filter only when the filters allow it (seccomp_allows_unmap,
     * asked for each page address below); else the page stays behind.
     * It also needs the 16 bytes below the frame (inj_arch_unmap_stub_sp). */
    bool can_unmap = true;
    c->self_unmap = true;
    {
        static const unsigned char zero[16];

        r = inj_mem_write(t->tid, inj_arch_unmap_stub_sp(c->frame), zero,
                          (size_t)(c->frame - inj_arch_unmap_stub_sp(c->frame)));
        if (r == -ESRCH)
            return inj_err(err, errlen, INJ_EEXITED, "pid %d exited while being injected",
                           t->pid);
        if (r)
            can_unmap = false;
    }
    c->rescue = true;

    /* A page for the return stub and the strings, at a random free
     * address (MAP_FIXED_NOREPLACE). Self-unmapping: we see mmap's result
     * at its exit and park the thread at munmap(page) right there. The
     * mmap itself runs from munmap's syscall instruction with munmap as
     * its way out (inj_rescue_run, via_munmap), so our death inside it
     * takes the page too; where munmap is not glibc's bare wrapper, that
     * one call is a window in which our death leaves the page. Otherwise
     * /proc/PID/maps tells whether the call worked. */
    uint64_t plen = ((uint64_t)SCRATCH_MAX + RESCUE_STUB_ROOM + (uint64_t)page - 1) &
                    ~(uint64_t)(page - 1);
    _Static_assert(INJ_ARCH_UNMAP_STUB_MAX <= RESCUE_STUB_ROOM, "stub fits its room");
    for (int attempt = 0; attempt < 3; attempt++) {
        uint64_t hint = random_hint(page), got;
        if (!range_free(maps, hint, plen))
            continue;
        uint64_t args[6] = { hint, plen, PROT_READ | PROT_EXEC,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
                             (uint64_t)-1, 0 };

        c->self_unmap = can_unmap && (!c->sigreturn_runs || seccomp_allows_unmap(c, hint, plen));

        /* Said before the call: should we die inside it where that is a
         * window (above), the page left is the one named here
         * (tests/e2e/rel_kill_cli.sh tells that window from a leak). */
        inj_log(c->verbose, "mapping a rescue page at 0x%llx (%llu bytes): %s",
                (unsigned long long)hint, (unsigned long long)plen,
                !c->self_unmap ? "it stays should heapinject die"
                : c->munmap_syscall ? "from munmap's syscall, so that it goes should heapinject die"
                                    : "should heapinject die inside this mmap, the page stays");
        r = inj_rescue_run(c, "mmap", libc->mmap, args, 6, RET_MAPPED, &got, err, errlen);
        if (r)
            return r;
        if (c->seccomp_syscall >= 0)
            return INJ_OK; /* the caller reports the filter */
        if (c->self_unmap) {
            if (c->at != INJ_AT_UNMAP)
                continue;
            hint = got;
            stub_len = inj_arch_unmap_stub(stub, c->frame, hint, plen, c->munmap_fn);
            stub_end = 0;
        } else {
            if (!inj_rescue_mapped_exactly(t->tid, hint, plen))
                continue;
            stub_len = inj_arch_rescue_stub(stub, &stub_end);
        }
        c->page = hint;
        c->page_len = plen;
        if (inj_mem_write(t->tid, hint, stub, stub_len)) {
            c->page = 0;
            if (c->self_unmap) {
                /* The thread is parked at munmap(page): let it run. */
                uint64_t un[2] = { hint, plen }, ignored;

                r = inj_rescue_run(c, "munmap", c->munmap_fn, un, 2, RET_RESTORER, &ignored, err,
                               errlen);
                if (r)
                    return r;
                inj_log(c->verbose, "writing the return stub to 0x%llx failed (unmapped "
                        "again); calls return to the trap address", (unsigned long long)hint);
            } else {
                inj_log(c->verbose, "writing the return stub to 0x%llx failed (%llu bytes "
                        "stay mapped there); calls return to the trap address",
                        (unsigned long long)hint, (unsigned long long)plen);
            }
            c->rescue = false;
            return INJ_OK;
        }
        c->stub_ret = hint + stub_end;
        c->str_lo = hint + plen;
        /* Said once all is in place (tests/e2e/rel_kill_cli.sh kills us
         * right after this line and expects no page left). */
        inj_log(c->verbose, "rescue frame at 0x%llx (trampoline 0x%llx%s), page at 0x%llx%s: "
                "from now on, should heapinject die, thread %d restores itself",
                (unsigned long long)c->frame, (unsigned long long)c->restorer,
                c->sigreturn_runs ? ", seccomp: rt_sigreturn runs" : "",
                (unsigned long long)hint,
                c->self_unmap ? " (unmapped by the thread itself)" : " (stays)", t->tid);
        return INJ_OK;
    }
    inj_log(c->verbose, "could not map a rescue page; calls return to the trap address");
    c->rescue = false;
    return INJ_OK;
}
