/* sample.c - Python frames in a sampled stack (sample.h). */
#include "payload/python/sample.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "payload/python/read_self.h"
#include "payload/python/splice.h"
#include "payload/sys/sys.h"

/* Written once by pl_py_sample_init, before the hooks run. */
static struct pl_python pl_py;
static uintptr_t pl_py_eval_lo, pl_py_eval_hi;
static int pl_py_usable; /* found, with its eval loop: a session may read frames */
static char pl_py_why[160];

/* The table of code objects: mapped at a session's start, unmapped when
 * its agent has exited (detach leaves no mapping of ours behind). The
 * sampled path holds pl_py_users while it reads or fills the table, and
 * reads frames only while pl_py_armed; the release turns armed off, then
 * waits for the users to leave before unmapping (both sides sequentially
 * consistent: a hook either sees armed off or is counted). */
static struct pl_py_codes pl_py_codes;
static int pl_py_armed;
static int pl_py_users;
static int pl_py_no_table; /* this session's table could not be mapped */

/* Counted on the sampled path (relaxed: one add a sample). */
static uint64_t pl_py_with, pl_py_no_state, pl_py_not_valid, pl_py_unnamed, pl_py_unplaced, pl_py_cut,
    pl_py_subinterp;

/* The eval loop's code, from its symbol's size: [lo, hi), or 0. */
static int eval_range(uintptr_t *lo, uintptr_t *hi)
{
    void *f = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!f || !dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym || sym->st_size == 0)
        return -1;
    *lo = (uintptr_t)f;
    *hi = (uintptr_t)f + sym->st_size;
    return 0;
}

void pl_py_sample_init(void)
{
    if (pl_py_usable || pl_py_why[0])
        return;
    pl_python_find(&pl_py);
    if (!pl_py.found) {
        memcpy(pl_py_why, pl_py.why, sizeof(pl_py_why));
        return;
    }
    if (eval_range(&pl_py_eval_lo, &pl_py_eval_hi) < 0) {
        snprintf(pl_py_why, sizeof(pl_py_why),
                 "no Python frames: the eval loop (_PyEval_EvalFrameDefault) is not exported with its size");
        return;
    }
    pl_py_usable = 1;
}

/* Start of a session, before the hooks: the table mapped (a fork child
 * has its parent's, or none when the parent's agent had exited). */
static void arm(void)
{
    pl_py_no_table = 0;
    if (!pl_py_usable)
        return;
    if (!pl_py_codes.slots && pl_py_codes_init(&pl_py_codes) < 0) {
        pl_py_no_table = 1;
        return;
    }
    __atomic_store_n(&pl_py_armed, 1, __ATOMIC_SEQ_CST);
}

/* A wait of at most 2 s for hooks still in the table: a sample reads a
 * chain of at most HI_MAX_FRAMES frames, microseconds. */
#define RELEASE_WAIT_MS 2000

int pl_py_sample_release(void)
{
    __atomic_store_n(&pl_py_armed, 0, __ATOMIC_SEQ_CST);
    if (!pl_py_codes.slots)
        return 0;
    for (int ms = 0; __atomic_load_n(&pl_py_users, __ATOMIC_SEQ_CST); ms++) {
        if (ms >= RELEASE_WAIT_MS)
            return -1; /* a thread stopped inside (a debugger): the table stays, for the next session */
        struct timespec t = { 0, 1000000 };
        nanosleep(&t, NULL);
    }
    pl_py_codes_release(&pl_py_codes);
    return 0;
}

PL_FORK_TEXT void pl_py_sample_atfork_child(int follow)
{
    /* Written only when not already so: a write copies the page into
     * every child, after a detach too (fork_text.h). */
    if (__atomic_load_n(&pl_py_users, __ATOMIC_RELAXED))
        __atomic_store_n(&pl_py_users, 0, __ATOMIC_RELAXED);
    if (follow)
        return; /* the child's own session reads frames with the table it has */
    if (__atomic_load_n(&pl_py_armed, __ATOMIC_SEQ_CST))
        __atomic_store_n(&pl_py_armed, 0, __ATOMIC_SEQ_CST);
    if (pl_py_codes.slots) /* else no write: no page copied */
        pl_py_codes_release(&pl_py_codes);
}

/* The splice itself: pl_py_sample_splice holds the table around it. */
static uint32_t splice_held(uintptr_t *pcs, uint32_t n, uint32_t max);

uint32_t pl_py_sample_splice(uintptr_t *pcs, uint32_t n, uint32_t max)
{
    if (!pl_py_usable)
        return n; /* not Python: one branch a sample */
    __atomic_fetch_add(&pl_py_users, 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&pl_py_armed, __ATOMIC_SEQ_CST))
        n = splice_held(pcs, n, max);
    __atomic_fetch_sub(&pl_py_users, 1, __ATOMIC_RELEASE);
    return n;
}

static uint32_t splice_held(uintptr_t *pcs, uint32_t n, uint32_t max)
{
    struct pl_py_frame py[HI_MAX_FRAMES];
    enum pl_python_none none = 0;
    int np = pl_python_frames(&pl_py, py, HI_MAX_FRAMES, &none);
    if (np <= 0) {
        if (none == PL_PYTHON_NO_STATE)
            __atomic_fetch_add(&pl_py_no_state, 1, __ATOMIC_RELAXED);
        else if (none == PL_PYTHON_SUBINTERP)
            __atomic_fetch_add(&pl_py_subinterp, 1, __ATOMIC_RELAXED);
        else if (none == PL_PYTHON_NOT_VALID)
            __atomic_fetch_add(&pl_py_not_valid, 1, __ATOMIC_RELAXED);
        else
            __atomic_fetch_add(&pl_py_no_state, 1, __ATOMIC_RELAXED); /* state, but no frame running */
        return n;
    }
    /* Each frame named and its position made a line: the frame word's
     * value is (code id, line), so the bucket is the line's. */
    struct pl_py_self_pages pages = { { 0 }, 0 };
    struct pl_py_reader r = { pl_py_read_self, &pages };
    uint32_t ids[HI_MAX_FRAMES];
    uint64_t unnamed = 0;
    for (int i = 0; i < np; i++) {
        uint32_t id = pl_py_codes_get(&pl_py_codes, &pl_py.offsets, &pl_py.types, &r, py[i].code);
        const struct pl_py_code *e = pl_py_codes_entry(&pl_py_codes, id);
        uint32_t line = 0;
        if (e && !e->table_cut)
            line = pl_py_line(pl_py.offsets.lines, e->table, e->table_len, e->firstlineno, py[i].instr);
        if (!e) {
            id = 0;
            unnamed++;
        }
        ids[i] = id;
        py[i].instr = line;
    }
    if (unnamed)
        __atomic_fetch_add(&pl_py_unnamed, unnamed, __ATOMIC_RELAXED);
    uint64_t out[HI_MAX_FRAMES];
    if (max > HI_MAX_FRAMES)
        max = HI_MAX_FRAMES;
    unsigned placed = 0;
    unsigned k = pl_py_splice((const uint64_t *)pcs, n, py, ids, (unsigned)np, pl_py_eval_lo, pl_py_eval_hi, out, max,
                              &placed);
    if (!placed) {
        /* No native frame of the eval loop to put them at: the native walk
         * ended before it (code without unwind information: libffi's
         * call, a JIT). The Python frames are still the callers of all
         * of it, so they follow the native frames, outermost last; what
         * lay between is missing, as the walk counted. */
        k = n < max ? n : max;
        memcpy(out, pcs, k * sizeof(out[0]));
        for (int i = 0; i < np && k < max; i++, placed++)
            out[k++] = hi_frame_python(ids[i], py[i].instr);
        if (!placed)
            return n;
        __atomic_fetch_add(&pl_py_unplaced, 1, __ATOMIC_RELAXED);
    }
    /* Frames past the bound (a Python chain deeper than HI_MAX_FRAMES, or
     * the native and Python frames together longer): the innermost are
     * kept, and the last word says the stack was cut. */
    if (py[np - 1].cut || (placed < (unsigned)np && k == max)) {
        if (k == max)
            k--;
        out[k++] = hi_frame_python(HI_PYCODE_CUT, 0);
        __atomic_fetch_add(&pl_py_cut, 1, __ATOMIC_RELAXED);
    }
    memcpy(pcs, out, k * sizeof(out[0]));
    __atomic_fetch_add(&pl_py_with, 1, __ATOMIC_RELAXED);
    return k;
}

void pl_py_sample_new_session(void)
{
    arm();
    __atomic_store_n(&pl_py_cut, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_subinterp, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_with, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_no_state, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_not_valid, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_unnamed, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&pl_py_unplaced, 0, __ATOMIC_RELAXED);
}

void pl_py_sample_report(struct hi_snap_python *out)
{
    memset(out, 0, sizeof(*out));
    if (!pl_py.found && !pl_py_why[0])
        return;
    int armed = __atomic_load_n(&pl_py_armed, __ATOMIC_RELAXED);
    out->state = armed ? HI_PYTHON_READ : HI_PYTHON_UNREAD;
    out->minor = pl_py.found ? pl_py.offsets.minor : 0;
    if (pl_py_why[0])
        memcpy(out->why, pl_py_why, sizeof(out->why) - 1);
    else if (pl_py_no_table)
        snprintf(out->why, sizeof(out->why), "no Python frames: no memory for the table of code objects");
    out->with_frames = __atomic_load_n(&pl_py_with, __ATOMIC_RELAXED);
    out->no_state = __atomic_load_n(&pl_py_no_state, __ATOMIC_RELAXED);
    out->not_valid = __atomic_load_n(&pl_py_not_valid, __ATOMIC_RELAXED);
    out->unnamed = __atomic_load_n(&pl_py_unnamed, __ATOMIC_RELAXED);
    out->unplaced = __atomic_load_n(&pl_py_unplaced, __ATOMIC_RELAXED);
    out->cut = __atomic_load_n(&pl_py_cut, __ATOMIC_RELAXED);
    out->subinterp = __atomic_load_n(&pl_py_subinterp, __ATOMIC_RELAXED);
    if (armed)
        for (uint32_t id = 1; id <= PL_PY_CODES; id++)
            out->codes += pl_py_codes_entry(&pl_py_codes, id) != NULL;
}

const struct pl_py_codes *pl_py_sample_codes(void)
{
    return __atomic_load_n(&pl_py_armed, __ATOMIC_RELAXED) ? &pl_py_codes : NULL;
}
