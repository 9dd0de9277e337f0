/* profile.h - the cli's in-memory heap profile: one snapshot, symbolized.
 *
 * Built from the agent's snapshot records (cli/link/client.c), filled with symbols
 * (cli/symbolize/symbolize.c), and read by every writer (cli/report/). Writers never
 * talk to the target; they only see this structure. All memory is owned by
 * the profile and released by cli_profile_free(): every pointer below is
 * its own malloc() allocation, and so is each string of each frame except
 * in stacks marked shared_strings, whose frames' strings belong to the
 * profile's string pool (`strings`, cli/util/intern.h) and are never
 * freed one by one (the symbolizer interns them: issue 17).
 */
#ifndef HI_CLI_PROFILE_H
#define HI_CLI_PROFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "common/proto.h"

/* One source-level frame. A program counter may expand to several frames
 * when functions were inlined: the innermost inlined frame comes first and
 * has inlined = true; the last one is the real (physical) function. */
struct cli_frame {
    uint64_t addr;      /* program counter as captured (return address) */
    char *function;     /* demangled name, or NULL when unknown */
    char *module;       /* path of the mapped file, or NULL */
    char *file;         /* source file, or NULL */
    int line;           /* source line, 0 when unknown */
    bool inlined;       /* an inlined frame inside the next one */
    uint64_t module_offset; /* addr relative to the module's load base */
    uint8_t runtime;    /* enum hi_frame_kind: HI_FRAME_PYTHON for a frame of
                           Python code (function: its qualname, file and line
                           its own; addr the frame word; no module) */
};

struct cli_stack {
    uint32_t npcs;
    uint64_t *pcs;           /* raw PCs, innermost first (the symbolizer drops
                                those inside libheapinject.so) */
    uint32_t nframes;        /* symbolized frames (>= npcs when inlining) */
    struct cli_frame *frames;/* innermost first, heapinject's own frames removed */
    bool shared_strings;     /* frames' strings are the profile's `strings`
                                pool's: not freed with the frames */

    /* unbiased estimates (bytes and objects) */
    double live_bytes, live_objects, alloc_bytes, alloc_objects;
    /* exact counts of sampled allocations */
    uint64_t raw_live_bytes, raw_live_objects, raw_alloc_bytes, raw_alloc_objects;
    uint64_t oldest_live_ns;  /* 0 if nothing live */
    uint64_t live_age_sum_ms;
    int64_t growth[HI_GROWTH_POINTS];
    int32_t first_tid;
    uint32_t kind;           /* enum hi_kind: malloc'ed blocks or direct mmap */
    int32_t pid;             /* the process of the stack in a profile of several
                                (cli/profile/merge.h); 0: the profile's pid */
    uint32_t bucket;         /* the agent's bucket index (the order the
                                snapshot sent it), or the stack's index in a
                                JSON profile: what a cli_tick's top names */
};

struct cli_thread {
    int32_t tid;
    bool alive;
    char name[HI_THREAD_NAME_LEN + 1];
    uint64_t alloc_bytes, alloc_calls, free_bytes, free_calls;
};

/* One tick seen during a session (for time series, massif, growth). */
struct cli_tick {
    double t_s;              /* seconds since attach */
    uint64_t live_bytes;     /* estimated live heap since attach */
    uint64_t alloc_bytes;    /* estimated bytes allocated since attach */
    uint64_t rss_bytes;
    int32_t pid;             /* the process whose agent sent it (a profile of
                                several: its ticks merged in time order, the
                                totals summed, cli/profile/merge_ticks.h);
                                0: the profile's pid */
    /* the stacks whose live bytes rose most since the tick before, most
     * first (hi_tick_top; ntop 0 from an older agent): bucket is the
     * agent's bucket index, the cli_stack.bucket of a stack of this tick's
     * pid (buckets of different processes are unrelated) */
    uint32_t ntop;
    uint32_t top_bucket[HI_TICK_TOP];
    int64_t top_grew[HI_TICK_TOP];
    uint64_t top_live[HI_TICK_TOP];
    /* the stacks that were among the top risers at some tick (hi_tick_kept;
     * nkept 0 from an older agent), with their live bytes at this tick:
     * a riser's line drawn on after it stopped rising */
    uint32_t nkept;
    uint32_t kept_bucket[HI_TICK_KEPT];
    uint64_t kept_live[HI_TICK_KEPT];
};

/* A Python code object the agent named (SNAP_PYCODE). */
struct cli_pycode {
    uint32_t id, firstlineno;
    char *name, *file;
};

/* The target's Python, as the agent read it (SNAP_PYTHON; issue 29). */
struct cli_python {
    bool have;                 /* the agent said (a Python process) */
    struct hi_snap_python st;  /* st.why NUL-terminated */
    size_t ncodes;
    struct cli_pycode *codes;  /* ascending id */
};

/* The code named id, or NULL. */
const struct cli_pycode *cli_python_code(const struct cli_python *py, uint32_t id);

/* Frees the codes; have becomes false. */
void cli_python_clear(struct cli_python *py);

/* Name of a frame's runtime for reports ("python"), NULL for native. */
const char *cli_frame_runtime_name(uint8_t runtime);

struct cli_memory; /* cli/memory/breakdown.h */
struct cli_intern; /* cli/util/intern.h */

/* A module in the stacks that has no debug information: its frames have no
 * file:line (cli/symbolize/debughint.h says what would give them some). */
struct cli_debug_hint {
    char *module;            /* path as mapped */
    char *build_id;          /* hex GNU build id, or NULL */
    char *package;           /* Debian package owning the file (dpkg), or NULL */
    char *ask_path;          /* not asked yet: the file to ask dpkg about when
                                the hint is printed (cli_debughint_package_of),
                                or NULL: package is all there is */
};

/* The process exited during the session (JSON "target_exit", docs/JSON.md). */
struct cli_target_exit {
    double as_of_s_before;   /* the report's data is this much older than the exit
                                (when the cli saw the connection close) */
    bool status_known;       /* signal or exit_code below is the real one */
    int signal;              /* killed by this signal (status_known, > 0) */
    int exit_code;           /* else its exit code (status_known) */
    bool stacks;             /* false: no snapshot before the exit, only the
                                totals of the last tick */
    /* Which snapshot the report is: 0 a background one; else the agent's
     * own (common/proto.h enum hi_push_reason): 1 in the handler of a
     * fatal signal, 2 at memory pressure. */
    int pushed;
    int push_signal, push_si_code;      /* pushed 1 */
    char pressure_measure[16];          /* pushed 2: "cgroup v1", "cgroup v2", "system" */
    uint64_t pressure_usage, pressure_limit; /* pushed 2: bytes */
    bool at_exit;            /* the data is the snapshot its profiler wrote as it
                                ended (PID.last, common/last_snapshot.h) */
    double at_unix_s;        /* when it ended (CLOCK_REALTIME); 0 unknown */
};

/* One process of a profile of several (issue 28: `heapinject report A B`
 * merges the profiles of a service's processes). Strings are owned. */
struct cli_process {
    int32_t pid, ppid;       /* ppid 0 when unknown */
    char *comm;              /* the process's name, or NULL when unknown */
    char *exe;               /* its executable's path, or NULL */
    bool started_during_session; /* forked after the session began */
    double attach_ms;        /* how long the attach took; < 0 unknown */
    uint64_t rss_bytes;      /* at its snapshot */
    uint64_t rate;           /* its sampling rate */
    uint64_t attach_ns, snapshot_ns; /* CLOCK_MONOTONIC of the target's host */
    double duration_s;       /* its own session's: snapshot - attach */
    struct hi_totals totals; /* its own session's totals */
    bool have_exit;          /* it exited during the session: how */
    struct cli_target_exit exit;
};

struct cli_profile {
    int32_t pid;
    uint64_t rate;
    double duration_s;       /* snapshot time - attach time */
    uint64_t attach_ns, snapshot_ns;
    uint64_t rss_bytes;
    struct hi_totals totals;

    size_t nstacks;
    struct cli_stack *stacks; /* sorted by live_bytes descending once sorted */

    size_t nthreads;
    struct cli_thread *threads;

    struct hi_snap_hist hist;

    /* Direct mmap (issue 14): exact counts, when the agent sent them.
     * totals' est_* are the malloc family's; the mmap kind's estimates
     * are the sums of its stacks (cli_profile_kind_sum). */
    bool have_mmap;
    struct hi_snap_mmap mmap;

    /* How the stack walks went (SNAP_WALKS, or "stack_walks" read back):
     * absent from older agents and profiles. */
    bool have_walks;
    struct hi_snap_walks walks;

    /* CPython's allocator (issue 29 item 2): whether it was sampled and
     * why not (SNAP_PYMALLOC, or "pymalloc" read back); absent when the
     * process is not Python. Its estimates are the sums of the stacks of
     * kind pymalloc, objects inside the arenas the mmap stacks hold. */
    bool have_pymalloc;
    struct hi_snap_pymalloc pymalloc;

    char *maps;              /* target's /proc/PID/maps at snapshot time */
    size_t maps_len;

    size_t nticks;
    struct cli_tick *ticks;

    uint32_t tick_ms;        /* agent's tick interval (growth points are one
                                tick apart); 0 when unknown */

    struct cli_memory *memory; /* RSS by holder at snapshot time, or NULL
                                  (a profile read back from a file) */
    struct cli_census *census; /* heapinject -p --census: the heap as it is
                                  at the end of the session, or NULL */
    bool census_only;          /* read back from `heapinject census`'s JSON:
                                  the census and nothing else */

    struct cli_python python;   /* Python frames' names and how they went */

    struct cli_intern *strings; /* the pool that stacks with shared_strings
                                   point into (a reference), or NULL */

    size_t ndebug_hints;       /* set by the symbolizer, once per module */
    struct cli_debug_hint *debug_hints;

    /* A profile read back from a JSON file: its "note" and, when its
     * process exited during the session, how ("target_exit"), so that
     * `heapinject report FILE` says what the live report said. */
    char *note;
    bool have_exit;
    struct cli_target_exit exit;

    /* A profile of several processes (cli/profile/merge.h): one entry
     * each, ordered by pid; each stack's pid names its process. Empty
     * (0, NULL) for a profile of one process, whose pid is `pid`. */
    size_t nprocesses;
    struct cli_process *processes;
    /* The processes' maps differ: the same address may mean different
     * code in two of them (maps above is then NULL). */
    bool maps_differ;
};

/* Frees everything the profile owns (not the struct itself). */
void cli_profile_free(struct cli_profile *p);

/* Frees the debug hints; ndebug_hints becomes 0. */
void cli_profile_clear_debug_hints(struct cli_profile *p);

/* Sorts stacks by live_bytes descending (ties: alloc_bytes descending). */
void cli_profile_sort(struct cli_profile *p);

/* Name of a kind for reports: "malloc" or "mmap". */
const char *cli_profile_kind_name(uint32_t kind);

/* enum hi_kind of a name, or -1. */
int cli_profile_kind_by_name(const char *name);

/* Sums of the stacks of one kind. */
struct cli_profile_kind_sums {
    double live_bytes, live_objects, alloc_bytes, alloc_objects;
    size_t nstacks;
};
void cli_profile_kind_sum(const struct cli_profile *p, uint32_t kind, struct cli_profile_kind_sums *out);

/* Frees a frame's strings and zeroes it. */
void cli_frame_clear(struct cli_frame *f);

/* Frees a stack's symbolized frames (not its PCs; their strings only when
 * they are not shared_strings); nframes becomes 0. */
void cli_stack_clear_frames(struct cli_stack *s);

#endif /* HI_CLI_PROFILE_H */
