/* alloc_install.c - putting the pymalloc wrappers in and taking them out
 * (alloc.h), with the GIL held, never waiting for it without a bound.
 *
 * The MEM and OBJ domains may only be changed with the GIL held (their
 * callers hold it: while we hold it, nobody is inside the allocator or
 * inside a wrapper). The agent thread never takes the GIL itself: a
 * thread that waits for it can wait for good (an extension's C loop that
 * keeps it), and CPython 3.8 to 3.13 end any thread that asks for the GIL
 * once the interpreter is finalizing (take_gil: PyThread_exit_thread).
 * Instead the agent starts a thread of ours (its own stack, every signal
 * blocked, marked as the agent is, so its own allocations are never
 * counted) that calls PyGILState_Ensure: for a thread Python does not know
 * this makes a thread state, takes the GIL, and PyGILState_Release deletes
 * that state again (nothing is left behind in the interpreter). It waits
 * at most one switch interval (5 ms) behind a thread running bytecode.
 *
 * The job's state goes WAITING -> RUNNING (the thread, GIL held) -> DONE,
 * or WAITING -> ABANDONED (the agent, past PL_PYM_GIL_WAIT_MS: an install
 * given up; the thread, should it get the GIL later, sees it and only
 * lets the GIL go). Whoever wins the compare-and-swap decides. A restore
 * is never given up: after the bound the detach goes on, the wrappers only
 * forward (the hooks' key is off, the payload is never unloaded), and the
 * thread restores when the GIL comes; a new session meanwhile is refused
 * an install and says why.
 *
 * Pointers into Python (the API's functions) come from the dynamic symbol
 * table of the module that defines PyType_Type, read from memory
 * (dynelf.h): dlsym would malloc an error string in every process that is
 * not Python. */
#include "payload/interpose/pymalloc.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "payload/record/record.h"
#include "payload/sys/sys.h"
#include "payload/python/python.h"

/* The C API used here (all exported by libpython or by an executable that
 * links it in, 3.8 to 3.13). PyGILState_STATE is an enum: an int. */
struct pym_api {
    int (*is_initialized)(void);
    int (*is_finalizing)(void);  /* _Py_IsFinalizing, 3.13: Py_IsFinalizing */
    int (*gil_ensure)(void);
    void (*gil_release)(int);
    void (*get_allocator)(int domain, struct pl_pym_allocator *out);
    void (*set_allocator)(int domain, struct pl_pym_allocator *in);
    const char *(*allocator_name)(void); /* "pymalloc", "malloc", ... or NULL: not a standard one */
};

enum { JOB_IDLE = 0, JOB_WAITING, JOB_RUNNING, JOB_DONE, JOB_ABANDONED };
enum { JOB_INSTALL = 1, JOB_RESTORE };

struct pym_job {
    int kind;         /* JOB_INSTALL or JOB_RESTORE; set before the thread starts */
    int state;        /* JOB_*: atomic, see above */
    int result;       /* the thread's (before DONE): 0 or -errno */
    char why[152];    /* the thread's (before DONE) */
};

#define PYM_STACK_BYTES (256u << 10)
#define PYM_GUARD_BYTES 4096u

/* Agent thread's, but `installed` and the job's fields as said above. */
static struct {
    int python;          /* the process holds CPython */
    int api_ok;          /* pym.api and pym.minor found, usable */
    uint32_t minor;
    struct pym_api api;
    int status;          /* hi_snap_pymalloc.status */
    char why[152];
    int installed;       /* the wrappers are in (written by the GIL thread while it holds the GIL) */
    int none_seen;       /* no module held CPython when the loader's counts were these: */
    unsigned long long none_adds, none_subs;
    struct pym_job job;
    int have_thread;     /* a GIL thread not joined yet */
    pthread_t thread;
    void *stack;
    uint64_t deadline_ns;
} pym;

static void say(int status, const char *fmt, const char *arg)
{
    pym.status = status;
    snprintf(pym.why, sizeof(pym.why), fmt, arg ? arg : "");
}

/* ---- finding the interpreter ------------------------------------------ */

struct found {
    struct pl_dyn dyn;
    int ok;
    char name[256];
};

static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct found *f = arg;
    if (pl_dyn_parse(info, &f->dyn) < 0 || !pl_dyn_lookup(&f->dyn, "PyType_Type"))
        return 0;
    f->ok = 1;
    snprintf(f->name, sizeof(f->name), "%s", info->dlpi_name ? info->dlpi_name : "");
    return 1;
}

#define LOOKUP(field, name) (*(void **)&pym.api.field = (void *)pl_dyn_lookup(&f.dyn, name))

struct load_counts {
    unsigned long long adds, subs;
    int ok;
};

/* The loader's counts of modules ever loaded and unloaded (one entry
 * read): equal counts, the same modules. */
static int counts_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct load_counts *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
        c->ok = 1;
    }
    return 1;
}

/* Fills pym.api and pym.minor: 0, or -1 with pym.status/why set (0 and
 * nothing said: not Python). A process already found without CPython is
 * not searched again while no module came or went: every followed fork
 * child of a non-Python server starts an agent, and the search parses
 * each module's dynamic section (postgres: 2.3% of its CPU under
 * pgbench -C). */
static int find_python(void)
{
    struct load_counts lc = { 0, 0, 0 };
    dl_iterate_phdr(counts_of, &lc);
    if (lc.ok && pym.none_seen && lc.adds == pym.none_adds && lc.subs == pym.none_subs)
        return -1;
    struct found f;
    memset(&f, 0, sizeof(f));
    dl_iterate_phdr(find_module, &f);
    if (!f.ok) {
        pym.none_seen = lc.ok;
        pym.none_adds = lc.adds;
        pym.none_subs = lc.subs;
        return -1;
    }
    pym.python = 1;
    char flag = '\0', exe[256];
    const char *file = f.name;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (!strstr(file, "python3.") && n > 0) { /* the executable itself (Debian's) */
        exe[n] = '\0';
        file = exe;
    }
    unsigned minor = pl_python_minor_from_name(file, &flag);
    const uint32_t *hex = (const uint32_t *)pl_dyn_lookup(&f.dyn, "Py_Version"); /* 3.11 and later */
    if (hex && (*hex >> 24) == 3)
        minor = (*hex >> 16) & 0xff;
    pym.minor = minor;
    if (!minor) {
        say(-ENOTSUP, "pymalloc not sampled: the interpreter's version is not known%s", NULL);
        return -1;
    }
    if (minor < 8 || minor > 13) {
        char v[16];
        snprintf(v, sizeof(v), "3.%u", minor);
        say(-ENOTSUP, "pymalloc not sampled: Python %s (3.8 to 3.13 are)", v);
        return -1;
    }
    if (flag == 't') {
        say(-ENOTSUP, "pymalloc not sampled: a free-threaded build (its allocator is mimalloc)%s", NULL);
        return -1;
    }
    LOOKUP(is_initialized, "Py_IsInitialized");
    if (!LOOKUP(is_finalizing, "_Py_IsFinalizing"))
        LOOKUP(is_finalizing, "Py_IsFinalizing");
    LOOKUP(gil_ensure, "PyGILState_Ensure");
    LOOKUP(gil_release, "PyGILState_Release");
    LOOKUP(get_allocator, "PyMem_GetAllocator");
    LOOKUP(set_allocator, "PyMem_SetAllocator");
    LOOKUP(allocator_name, "_PyMem_GetCurrentAllocatorName");
    if (!pym.api.is_initialized || !pym.api.is_finalizing || !pym.api.gil_ensure || !pym.api.gil_release ||
        !pym.api.get_allocator || !pym.api.set_allocator || !pym.api.allocator_name) {
        say(-ENOTSUP, "pymalloc not sampled: the interpreter does not export its allocator API%s", NULL);
        return -1;
    }
    return 0;
}

/* ---- the work, in the GIL thread with the GIL held --------------------- */

static void job_fail(struct pym_job *j, int err, const char *why, const char *arg)
{
    j->result = err;
    snprintf(j->why, sizeof(j->why), why, arg ? arg : "");
}

/* Whether the domain's allocator now is our wrapper of d. */
static int ours(int domain, struct pl_pym_domain *d)
{
    struct pl_pym_allocator cur, w = pl_pymalloc_wrapper(d);
    pym.api.get_allocator(domain, &cur);
    return cur.ctx == w.ctx && cur.malloc == w.malloc && cur.free == w.free;
}

static void do_install(struct pym_job *j)
{
    if (ours(PL_PYM_DOMAIN_MEM, &pl_pym_mem) && ours(PL_PYM_DOMAIN_OBJ, &pl_pym_obj)) {
        /* An earlier session's wrappers, given back to the domains by
         * whoever had put an allocator in front of them: their `old` is
         * right, and is not written while they may be called. */
        __atomic_store_n(&pym.installed, 1, __ATOMIC_RELEASE);
        return;
    }
    const char *name = pym.api.allocator_name();
    if (!name) {
        job_fail(j, -EBUSY, "pymalloc not sampled: another allocator is in front of Python's (tracemalloc, "
                            "or the program's own)%s", NULL);
        return;
    }
    if (!strcmp(name, "malloc") || !strcmp(name, "malloc_debug")) {
        job_fail(j, -ENOTSUP, "pymalloc not sampled: Python's objects are malloc's blocks here (PYTHONMALLOC=%s): "
                              "they are in the malloc stacks", name);
        return;
    }
    if (strcmp(name, "pymalloc") != 0) {
        job_fail(j, -ENOTSUP, "pymalloc not sampled: Python's allocator is %s (only pymalloc without debug hooks "
                              "is sampled)", name);
        return;
    }
    struct pl_pym_allocator w;
    pym.api.get_allocator(PL_PYM_DOMAIN_MEM, &pl_pym_mem.old);
    pym.api.get_allocator(PL_PYM_DOMAIN_OBJ, &pl_pym_obj.old);
    w = pl_pymalloc_wrapper(&pl_pym_mem);
    pym.api.set_allocator(PL_PYM_DOMAIN_MEM, &w);
    w = pl_pymalloc_wrapper(&pl_pym_obj);
    pym.api.set_allocator(PL_PYM_DOMAIN_OBJ, &w);
    __atomic_store_n(&pym.installed, 1, __ATOMIC_RELEASE);
}

/* A domain whose allocator is no longer our wrapper (someone put theirs
 * in front, having saved ours) is left as it is: ours stays in their
 * chain and forwards. */
static void do_restore(struct pym_job *j)
{
    int left = 0;
    if (ours(PL_PYM_DOMAIN_MEM, &pl_pym_mem))
        pym.api.set_allocator(PL_PYM_DOMAIN_MEM, &pl_pym_mem.old);
    else
        left++;
    if (ours(PL_PYM_DOMAIN_OBJ, &pl_pym_obj))
        pym.api.set_allocator(PL_PYM_DOMAIN_OBJ, &pl_pym_obj.old);
    else
        left++;
    __atomic_store_n(&pym.installed, 0, __ATOMIC_RELEASE);
    if (left)
        job_fail(j, -EBUSY, "Python's allocator: another allocator was put in front of ours meanwhile: ours stays "
                            "in its chain, forwarding only%s", NULL);
}

static void *gil_main(void *arg)
{
    struct pym_job *j = arg;
    pl_thread_mark_agent(); /* our own allocations (the thread state) go straight through */
    pl_proc_name_self("heapinject-gil"); /* not its creator's pthread_setname_np: procmaps.h */
    int g = pym.api.gil_ensure();
    int expect = JOB_WAITING;
    if (__atomic_compare_exchange_n(&j->state, &expect, JOB_RUNNING, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        if (pym.api.is_finalizing())
            job_fail(j, -ESHUTDOWN, "pymalloc not sampled: the interpreter is finalizing%s", NULL);
        else if (j->kind == JOB_INSTALL)
            do_install(j);
        else
            do_restore(j);
        __atomic_store_n(&j->state, JOB_DONE, __ATOMIC_RELEASE);
    }
    pym.api.gil_release(g);
    return NULL;
}

/* ---- the agent's side --------------------------------------------------- */

/* The GIL thread, once it has ended: joined and its stack given back. */
static void reap(void)
{
    if (pym.have_thread && pthread_tryjoin_np(pym.thread, NULL) == 0) {
        munmap(pym.stack, PYM_STACK_BYTES + PYM_GUARD_BYTES);
        pym.have_thread = 0;
    }
}

/* Starts the GIL thread for a job: 0 or -errno. Its stack is ours
 * (unmapped once joined): a stack glibc made would stay in its cache of
 * dead threads' stacks, words that a later census takes for roots. */
static int start_job(int kind)
{
    memset(&pym.job, 0, sizeof(pym.job));
    pym.job.kind = kind;
    pym.job.state = JOB_WAITING;
    void *stack = mmap(NULL, PYM_STACK_BYTES + PYM_GUARD_BYTES, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -ENOMEM;
    pthread_attr_t attr;
    int err = pthread_attr_init(&attr);
    if (!err) {
        if (mprotect(stack, PYM_GUARD_BYTES, PROT_NONE) != 0)
            err = errno;
        if (!err)
            err = pthread_attr_setstack(&attr, (char *)stack + PYM_GUARD_BYTES, PYM_STACK_BYTES);
        if (!err) /* the agent blocks every signal: the new thread inherits that */
            err = pthread_create(&pym.thread, &attr, gil_main, &pym.job);
        pthread_attr_destroy(&attr);
    }
    if (err) {
        munmap(stack, PYM_STACK_BYTES + PYM_GUARD_BYTES);
        pym.job.state = JOB_IDLE;
        return -err;
    }
    pym.stack = stack;
    pym.have_thread = 1;
    pym.deadline_ns = pl_now_ns() + PL_PYM_GIL_WAIT_MS * 1000000ull;
    return 0;
}

void pl_pymalloc_start(bool wanted)
{
    reap();
    if (pym.have_thread) {
        /* An earlier session's thread still waits for the GIL: a restore
         * (which it will do), or an install given up (which it will not). */
        say(-EBUSY, "pymalloc not sampled: an earlier session's thread still waits for the GIL%s", NULL);
        return;
    }
    pym.status = 0;
    pym.why[0] = '\0';
    if (!pym.api_ok) {
        if (find_python() < 0)
            return;
        pym.api_ok = 1;
    }
    if (!wanted) {
        /* Off by default: any allocator in front of pymalloc sends every
         * PyObject_Malloc/Free down CPython's slow path (a PGO build
         * inlines pymalloc only while it is the allocator): 0.75 of alone
         * on Debian's 3.11, 0.89 on 3.13 (bench/pymalloc_overhead.sh). */
        say(-EPERM, "pymalloc not sampled: not asked for (--pymalloc; it slows "
                    "allocation-heavy Python code by up to a quarter)%s", NULL);
        return;
    }
    if (!pym.api.is_initialized()) {
        say(-EAGAIN, "pymalloc not sampled: the interpreter is not initialized%s", NULL);
        return;
    }
    if (pym.api.is_finalizing()) {
        say(-ESHUTDOWN, "pymalloc not sampled: the interpreter is finalizing%s", NULL);
        return;
    }
    int err = start_job(JOB_INSTALL);
    if (err < 0)
        say(err, "pymalloc not sampled: no thread to take the GIL with (%s)", strerror(-err));
}

/* A job that has ended: its outcome into the status. */
static void job_done(void)
{
    if (pym.job.kind == JOB_INSTALL) {
        if (pym.job.result < 0)
            say(pym.job.result, "%s", pym.job.why);
        else
            say(1, "%s", "");
    } else if (pym.job.result < 0) {
        say(pym.job.result, "%s", pym.job.why);
    }
    pym.job.state = JOB_IDLE;
    reap();
}

void pl_pymalloc_poll(void)
{
    int st = __atomic_load_n(&pym.job.state, __ATOMIC_ACQUIRE);
    if (st == JOB_DONE) {
        job_done();
    } else if (st == JOB_WAITING && pym.job.kind == JOB_INSTALL && pl_now_ns() >= pym.deadline_ns) {
        int expect = JOB_WAITING;
        if (__atomic_compare_exchange_n(&pym.job.state, &expect, JOB_ABANDONED, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            char ms[16];
            snprintf(ms, sizeof(ms), "%u", PL_PYM_GIL_WAIT_MS);
            say(-ETIMEDOUT, "pymalloc not sampled: the GIL could not be had within %s ms (a thread keeps it)", ms);
        }
    } else if (st == JOB_ABANDONED || st == JOB_IDLE) {
        reap();
    }
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = { 0, (long)ms * 1000000L };
    nanosleep(&ts, NULL);
}

void pl_pymalloc_stop(void)
{
    if (!pym.python)
        return;
    /* An install still waiting is given up; one running ends in
     * microseconds (it holds the GIL and only swaps two structs). */
    int expect = JOB_WAITING;
    if (pym.job.kind == JOB_INSTALL &&
        __atomic_compare_exchange_n(&pym.job.state, &expect, JOB_ABANDONED, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        say(-ECANCELED, "pymalloc not sampled: the session ended before the GIL could be had%s", NULL);
    while (__atomic_load_n(&pym.job.state, __ATOMIC_ACQUIRE) == JOB_RUNNING)
        sleep_ms(1);
    if (__atomic_load_n(&pym.job.state, __ATOMIC_ACQUIRE) == JOB_DONE)
        job_done();
    if (!__atomic_load_n(&pym.installed, __ATOMIC_ACQUIRE))
        return;
    for (unsigned i = 0; i < 1000 && pym.have_thread; i++) { /* an abandoned install's thread, still waiting */
        reap();
        if (pym.have_thread)
            sleep_ms(1);
    }
    /* A finalizing interpreter is not asked for its GIL (PyGILState_Ensure
     * may end the thread, or find no interpreter): the wrappers stay and
     * forward, as they do should no thread start. */
    if (pym.have_thread || !pym.api.is_initialized() || pym.api.is_finalizing() || start_job(JOB_RESTORE) < 0)
        return; /* the wrappers only forward from now on (the key is off) */
    while (__atomic_load_n(&pym.job.state, __ATOMIC_ACQUIRE) != JOB_DONE && pl_now_ns() < pym.deadline_ns)
        sleep_ms(1);
    if (__atomic_load_n(&pym.job.state, __ATOMIC_ACQUIRE) == JOB_DONE)
        job_done();
    /* else: restored when the GIL comes (see the top of this file) */
}

PL_FORK_TEXT void pl_pymalloc_atfork_child(void)
{
    if (pym.have_thread) { /* written only then: no page copied otherwise */
        pym.have_thread = 0;
        pym.job.state = JOB_IDLE;
    }
}

int pl_pymalloc_state(struct hi_snap_pymalloc *out)
{
    if (!pym.python)
        return 0;
    memset(out, 0, sizeof(*out));
    out->status = pym.status;
    out->minor = pym.minor;
    snprintf(out->why, sizeof(out->why), "%s", pym.why);
    return 1;
}
