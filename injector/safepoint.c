/* safepoint.c - is it safe to call dlopen on this stopped thread now?
 *
 * dlopen allocates and takes the loader's locks. Called on a thread that is
 * inside malloc (holding an arena lock) it deadlocks on itself; inside the
 * dynamic linker it corrupts the loader's state ("Inconsistency detected by
 * ld.so"); inside a signal handler the interrupted code may hold either.
 * We unwind the stopped thread with libunwind-ptrace and look at every
 * frame: by address (the ld.so mappings, glibc's allocator code, which has
 * no symbol names in a stripped libc) and by name (other allocators).
 * A signal handler's frame is walked through: the code it interrupted is
 * checked as code a ptrace stop interrupted would be, so a handler that
 * interrupted malloc is refused and one that interrupted select() is not
 * (PostgreSQL 15 forks its walwriter and launchers inside the postmaster's
 * SIGCHLD/SIGUSR1 handlers: they run on that frame for their whole life).
 * Only a handler on an alternate signal stack is refused as such. */
#include "injector/safepoint.h"

#include <errno.h>
#include <signal.h>
#include <libunwind-ptrace.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/open_regular.h"
#include "injector/debuglink.h"
#include "injector/libc.h"
#include "injector/mem.h"
#include "injector/unwind_cache.h"

/* libunwind's own table search (exported, not in its public headers): what
 * _UPT_find_proc_info calls once it has located a module's table. */
extern int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
                                              unw_proc_info_t *pi, int need_unwind_info, void *arg);

#define MAX_FRAMES 128

const char *const inj_safepoint_unsafe_exact[] = {
    "malloc", "free", "cfree", "calloc", "realloc", "reallocarray", "memalign",
    "aligned_alloc", "posix_memalign", "valloc", "pvalloc", "malloc_usable_size",
    "malloc_trim", "mallinfo", "mallinfo2", "mallopt", "malloc_stats", "malloc_info",
    "sysmalloc", "systrim", "malloc_consolidate", "tcache_init", "arena_get2",
    "dlopen", "dlmopen", "dlclose", "dlsym", "dlvsym", "dladdr", "dladdr1", "dlinfo",
    "dlerror", "dl_iterate_phdr",
    /* fork holds every arena lock while it copies; exit runs destructors
     * and atexit handlers under __exit_funcs_lock, which dlopen takes. */
    "fork", "vfork", "_Fork", "__libc_fork", "exit", "__run_exit_handlers",
    "__cxa_atexit", "__cxa_finalize", "__cxa_thread_atexit_impl", "atexit", "on_exit",
    "pthread_create", NULL,
};

const char *const inj_safepoint_unsafe_prefix[] = {
    "_int_", "__libc_malloc", "__libc_free", "__libc_calloc", "__libc_realloc",
    "__libc_memalign", "__libc_valloc", "__libc_pvalloc", "__libc_dl", "__malloc",
    "_dl_", "__dl", "arena_", "tcache_",
    "je_", "mi_", "_mi_", NULL,
};

const char *const inj_safepoint_unsafe_substr[] = {
    "tcmalloc", "jemalloc", NULL,
};

bool inj_safepoint_unsafe_name(const char *name)
{
    for (int i = 0; inj_safepoint_unsafe_exact[i]; i++)
        if (!strcmp(name, inj_safepoint_unsafe_exact[i]))
            return true;
    for (int i = 0; inj_safepoint_unsafe_prefix[i]; i++)
        if (!strncmp(name, inj_safepoint_unsafe_prefix[i], strlen(inj_safepoint_unsafe_prefix[i])))
            return true;
    for (int i = 0; inj_safepoint_unsafe_substr[i]; i++)
        if (strstr(name, inj_safepoint_unsafe_substr[i]))
            return true;
    return false;
}

/* libunwind-ptrace reads a frame's unwind tables and symbols by opening
 * the file its mapping names (under /proc/PID/root), with a plain open().
 * That path is the target's user's to change: a FIFO put over a mapped
 * library (a bind mount keeps the maps line naming it) made that open, and
 * us with it, wait for ever (tests/e2e/cli_hostile_names.sh). So the two
 * accessors that open files go through a check that the file is a regular
 * one, opened without blocking; otherwise the frame has no unwind info and
 * no name (the walk stops there: the address checks still apply to it).
 * A file swapped between the check and libunwind's open wins that race;
 * it would need to be swapped within microseconds, on every attempt. */
/* Per thread: the cli attaches to several processes at once, one thread
 * each (cli/session/many.c). */
static __thread const struct inj_safepoint *unwinding; /* during inj_safepoint_check */
static __thread unw_accessors_t guarded_accessors;

/* The file of the mapping and the debug files it names (libunwind's
 * get_proc_name opens its .gnu_debuglink beside it, in .debug/ and under
 * /usr/lib/debug, plainly too: injector/debuglink.h). */
static bool module_is_safe(const struct inj_safepoint *sp, const struct inj_map *m)
{
    char path[4200];

    snprintf(path, sizeof(path), "/proc/%d/root%s", (int)sp->tid, m->path);
    int fd = hi_open_regular(path);
    if (fd < 0)
        return fd != -EINVAL; /* gone or unreadable: libunwind fails too */
    bool safe = !inj_debuglink_blocked(fd, m->path, sp->tid);
    close(fd);
    return safe;
}

/* Frames of one walk mostly stay in one module: the last answer is kept,
 * for one inj_safepoint_check (reset where `unwinding` is set). */
static __thread const struct inj_map *last;
static __thread bool last_safe;

static bool file_is_regular(unw_word_t ip)
{
    const struct inj_safepoint *sp = unwinding;
    if (!sp || !sp->maps)
        return true;
    for (size_t i = 0; i < sp->maps->n; i++) {
        const struct inj_map *m = &sp->maps->v[i];
        if (ip < m->start || ip >= m->end)
            continue;
        if (m->path[0] != '/' || m->deleted)
            return true; /* no file by that name for libunwind to open */
        if (m != last) {
            last_safe = module_is_safe(sp, m);
            last = m;
        }
        return last_safe;
    }
    return true; /* mapped after we read the maps: libunwind reads them anew */
}

/* The three accessors that cost: answered from the cache (unwind_cache.h),
 * and by libunwind-ptrace's own (behind the file checks) where it cannot. */
static int guarded_find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
                                  int need_unwind_info, void *arg)
{
    const struct inj_safepoint *sp = unwinding;
    if (sp && sp->uwc) {
        unw_dyn_info_t *di = (unw_dyn_info_t *)inj_uwc_table(sp->uwc, ip);
        if (di && _Ux86_64_dwarf_search_unwind_table(as, ip, di, pi, need_unwind_info, arg) == 0)
            return 0;
    }
    if (!file_is_regular(ip))
        return -UNW_ENOINFO;
    return _UPT_accessors.find_proc_info(as, ip, pi, need_unwind_info, arg);
}

static int guarded_get_proc_name(unw_addr_space_t as, unw_word_t ip, char *buf, size_t len,
                                 unw_word_t *off, void *arg)
{
    const struct inj_safepoint *sp = unwinding;
    uint64_t o;
    if (sp && sp->uwc && inj_uwc_name(sp->uwc, ip, buf, len, &o) == 0) {
        *off = o;
        return 0;
    }
    int rc;
    if (sp && sp->uwc && inj_uwc_name_known(sp->uwc, ip, buf, len, &o, &rc)) {
        if (rc == 0)
            *off = o;
        return rc;
    }
    if (!file_is_regular(ip))
        return -UNW_ENOINFO;
    rc = _UPT_accessors.get_proc_name(as, ip, buf, len, off, arg);
    if (sp && sp->uwc)
        inj_uwc_name_remember(sp->uwc, ip, rc, buf, *off);
    return rc;
}

static int cached_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
    const struct inj_safepoint *sp = unwinding;
    uint64_t v;
    if (!write && sp && sp->uwc && inj_uwc_read(sp->uwc, addr, &v) == 0) {
        *val = v;
        return 0;
    }
    return _UPT_accessors.access_mem(as, addr, val, write, arg);
}

int inj_safepoint_init(struct inj_safepoint *sp, const struct inj_maps *maps,
                       const struct inj_libc *libc)
{
    memset(sp, 0, sizeof(*sp));
    for (size_t i = 0; i < maps->n && sp->nldso < INJ_SAFEPOINT_MAX_RANGES; i++) {
        const struct inj_map *m = &maps->v[i];

        if (m->path[0] == '/' && inj_maps_is_ldso(m->path)) {
            sp->ldso[sp->nldso].lo = m->start;
            sp->ldso[sp->nldso].hi = m->end;
            sp->nldso++;
        }
    }
    sp->alloc.lo = libc->alloc_lo;
    sp->alloc.hi = libc->alloc_hi;
    sp->maps = maps;
    guarded_accessors = _UPT_accessors;
    guarded_accessors.find_proc_info = guarded_find_proc_info;
    guarded_accessors.get_proc_name = guarded_get_proc_name;
    guarded_accessors.access_mem = cached_access_mem;
    sp->uwc = inj_uwc_new(maps); /* NULL: libunwind-ptrace's accessors alone */
    sp->as = unw_create_addr_space(&guarded_accessors, 0);
    if (!sp->as)
        return -ENOMEM;
    unw_set_caching_policy(sp->as, UNW_CACHE_GLOBAL);
    return 0;
}

void inj_safepoint_fini(struct inj_safepoint *sp)
{
    if (sp->as)
        unw_destroy_addr_space(sp->as);
    sp->as = NULL;
    inj_uwc_free(sp->uwc);
    sp->uwc = NULL;
}

static bool in_ldso(const struct inj_safepoint *sp, uint64_t ip)
{
    for (int i = 0; i < sp->nldso; i++)
        if (ip >= sp->ldso[i].lo && ip < sp->ldso[i].hi)
            return true;
    return false;
}

/* cur is the frame a signal interrupted (libunwind marks that one; the
 * frame above it, at tramp_sp, is the sigreturn trampoline, whose stack
 * pointer points at the kernel's ucontext). A handler on the thread's
 * alternate signal stack is refused: the injected call would run on that
 * stack, often a few KiB (SIGSTKSZ), too small for dlopen. The ucontext
 * holds the stack's bounds (uc_stack: ss_sp, ss_flags, ss_size, after
 * uc_flags and uc_link) and, at offset 160, the interrupted stack pointer,
 * which must be cur's: the check that tramp_sp is that ucontext. Returns
 * 0, or 1 with why set. */
static int signal_frame_problem(unw_cursor_t *cur, unw_word_t tramp_sp, pid_t tid, int depth,
                                char *why, size_t whylen)
{
    unw_word_t sp = 0;
    uint64_t saved_sp = 0;
    struct {
        uint64_t ss_sp;
        int32_t ss_flags, pad;
        uint64_t ss_size;
    } st;

    if (unw_get_reg(cur, UNW_REG_SP, &sp) < 0 || !tramp_sp ||
        inj_mem_read(tid, tramp_sp + 16, &st, sizeof(st)) < 0 ||
        inj_mem_read(tid, tramp_sp + 160, &saved_sp, sizeof(saved_sp)) < 0 || saved_sp != sp) {
        snprintf(why, whylen, "thread %d is running a signal handler (frame #%d) whose frame "
                 "cannot be read", tid, depth);
        return 1;
    }
    if (st.ss_size && !(st.ss_flags & SS_DISABLE) && tramp_sp >= st.ss_sp &&
        tramp_sp < st.ss_sp + st.ss_size) {
        snprintf(why, whylen, "thread %d is running a signal handler on its alternate signal "
                 "stack (frame #%d; %llu bytes)", tid, depth, (unsigned long long)st.ss_size);
        return 1;
    }
    return 0;
}

int inj_safepoint_check(struct inj_safepoint *sp, pid_t tid, char *why, size_t whylen)
{
    unw_cursor_t cur;
    void *ui = _UPT_create(tid);
    int safe = 1, r;

    if (!ui)
        return -ENOMEM;
    sp->tid = tid;
    unwinding = sp;
    last = NULL;
    if (sp->uwc)
        inj_uwc_begin(sp->uwc, tid);
    r = unw_init_remote(&cur, sp->as, ui);
    if (r < 0) {
        unwinding = NULL;
        _UPT_destroy(ui);
        snprintf(why, whylen, "cannot unwind thread %d (libunwind error %d)", tid, r);
        return 0;
    }
    int depth, step = 0, sigframes = 0;
    unw_word_t prev_sp = 0;
    unw_word_t ip0 = 0;
    char name0[256] = "?";

    for (depth = 0; depth < MAX_FRAMES; depth++) {
        unw_word_t ip = 0, off = 0;
        char name[256];

        if (unw_get_reg(&cur, UNW_REG_IP, &ip) < 0 || ip == 0)
            break;
        /* A return address points after the call; look up the call. */
        uint64_t pc = depth ? ip - 1 : ip;

        if (unw_is_signal_frame(&cur) > 0) {
            /* This frame was interrupted by a signal, as a ptrace stop
             * interrupts any thread: it and those below are checked like
             * any others, at its exact instruction (maybe malloc's first). */
            if (signal_frame_problem(&cur, prev_sp, tid, depth, why, whylen)) {
                safe = 0;
                break;
            }
            sigframes++;
            pc = ip;
        }
        if (in_ldso(sp, pc)) {
            snprintf(why, whylen, "thread %d is inside the dynamic linker (frame #%d, pc 0x%llx)",
                     tid, depth, (unsigned long long)ip);
            safe = 0;
            break;
        }
        if (pc >= sp->alloc.lo && pc < sp->alloc.hi) {
            snprintf(why, whylen, "thread %d is inside libc's malloc (frame #%d, pc 0x%llx)",
                     tid, depth, (unsigned long long)ip);
            safe = 0;
            break;
        }
        int named = unw_get_proc_name(&cur, name, sizeof(name), &off) == 0;

        if (depth == 0) {
            ip0 = ip;
            if (named)
                snprintf(name0, sizeof(name0), "%s", name);
        }
        if (named && inj_safepoint_unsafe_name(name)) {
            snprintf(why, whylen, "thread %d is inside %s (frame #%d)", tid, name, depth);
            safe = 0;
            break;
        }
        if (unw_get_reg(&cur, UNW_REG_SP, &prev_sp) < 0)
            prev_sp = 0;
        step = unw_step(&cur);
        if (step <= 0)
            break;
    }
    if (safe)
        snprintf(why, whylen, "thread %d at pc 0x%llx (%s); %d frames walked%s, %s", tid,
                 (unsigned long long)ip0, name0, depth + 1,
                 sigframes ? " through a signal handler's frame" : "",
                 step < 0 ? "the walk stopped on an unwind error" : "to the outermost frame");
    unwinding = NULL;
    _UPT_destroy(ui);
    return safe;
}
