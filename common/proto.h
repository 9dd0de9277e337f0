/* proto.h - the wire protocol between the payload's agent and the cli.
 *
 * This header is the contract between payload/ (server, inside the target)
 * and cli/ (client). Everything on the wire is little-endian, fixed-size
 * fields, no padding surprises: structs below are packed and only ever
 * memcpy'd to/from the byte stream after a length check.
 *
 * Framing: every message is a hi_msg_header followed by `length` bytes of
 * body. A peer that receives a header whose magic or version is wrong, whose
 * type is unknown, or whose length exceeds the bound for that direction
 * closes the connection. Nothing else happens: the target is never harmed by
 * a bad message.
 *
 * Conversation (client C, agent A):
 *   C -> A  HELLO            (client's version)
 *   A -> C  HELLO            (hi_hello: version, pid, rate, attach time, ...)
 *   then any number of requests, each answered in order:
 *   C -> A  SNAPSHOT_REQ     A -> C  SNAP_BEGIN, SNAP_THREAD*, SNAP_HIST,
 *                                   [SNAP_MMAP], SNAP_BUCKET*, SNAP_MAPS*,
 *                                   SNAP_END (SNAP_MMAP: not from older agents;
 *                                   SNAP_WALKS after it, only when asked)
 *           (body hi_snapshot_req with HI_SNAP_WANT_NODES: stacks come as
 *            SNAP_NODES and SNAP_STACKS instead of SNAP_BUCKETs, or some of
 *            them; an older agent ignores the body and sends SNAP_BUCKETs)
 *   C -> A  SET_RATE         A -> C  ACK
 *   C -> A  WATCH            A -> C  ACK, then TICK every tick interval,
 *                                   interleaved with answers to later requests
 *           (body, optional: hi_snapshot_req, the flags SNAP_PUSH's
 *            snapshots are taken with, e.g. HI_SNAP_WANT_RUNTIME_FRAMES;
 *            none: native frames only, as older agents push)
 *   C -> A  DETACH           A -> C  ACK, then the agent unhooks and closes
 *   C -> A  OWN_SESSION      A -> C  ACK; this connection now owns the
 *                                   session: when it closes without DETACH
 *                                   (cli killed, crashed) the agent detaches.
 *   C -> A  ALLOC_STATS_REQ  A -> C  ALLOC_STATS (the allocator's own figures)
 *   C -> A  TRIM_REQ         A -> C  TRIM_DONE (the allocator was asked to
 *                                   give free memory back), then ALLOC_STATS
 *   A -> C  ERROR            (hi_error) before closing, when it can say why.
 *   A -> C  SNAP_PUSH        (hi_snap_push) then SNAP_BEGIN ... SNAP_END, between
 *                           two answers, unasked: only to the connection that
 *                           owns the session and sent WATCH, and only when the
 *                           start config asked for it (crash=1, pressure=1), so a
 *                           cli that does not know the message never gets it.
 */
#ifndef HI_COMMON_PROTO_H
#define HI_COMMON_PROTO_H

#include <stdint.h>

#define HI_PROTO_MAGIC 0x4a4e4948u /* "HINJ" read as little-endian bytes */
/* The release; the wire protocol below changes only when the bytes do. */
#define HEAPINJECT_VERSION "0.2.0"
/* 2: ALLOC_STATS_REQ/ALLOC_STATS and TRIM_REQ/TRIM_DONE (issue 14).
 * 3: a census's registers travel up to 28 threads a message (the request
 *    body's bound 4096), so an agent of 2 would refuse them as too long:
 *    the version says so first ("use the heapinject that attached it"). */
#define HI_PROTO_VERSION 3

/* Bounds. Client -> agent messages are tiny; agent -> client records are
 * bounded per record (a snapshot is a stream of records, never one blob). */
#define HI_MAX_REQUEST_BODY 4096u /* CENSUS_REGS: up to HI_CENSUS_REGS_PER_MSG threads */
#define HI_MAX_RECORD_BODY (64u * 1024u)
#define HI_MAX_FRAMES 128u
#define HI_THREAD_NAME_LEN 16u
#define HI_HIST_CLASSES 48u  /* power-of-two size classes: [2^i, 2^(i+1)) */
#define HI_GROWTH_POINTS 8u  /* per-bucket live-bytes history, one per tick */

enum hi_msg_type {
    HI_MSG_HELLO = 1,
    HI_MSG_SNAPSHOT_REQ = 2,
    HI_MSG_SET_RATE = 3,
    HI_MSG_WATCH = 4,
    HI_MSG_DETACH = 5,
    HI_MSG_OWN_SESSION = 6,
    HI_MSG_ALLOC_STATS_REQ = 7,
    HI_MSG_TRIM_REQ = 8,
    HI_MSG_CENSUS_REQ = 9,
    HI_MSG_CENSUS_PREP = 10, /* census, first step: READY (or END) answers */
    HI_MSG_CENSUS_REGS = 11, /* hi_census_regs of one stopped thread, before REQ */
    HI_MSG_ACK = 16,
    HI_MSG_ERROR = 17,
    HI_MSG_TICK = 18,
    HI_MSG_SNAP_BEGIN = 32,
    HI_MSG_SNAP_THREAD = 33,
    HI_MSG_SNAP_HIST = 34,
    HI_MSG_SNAP_BUCKET = 35,
    HI_MSG_SNAP_MAPS = 36,
    HI_MSG_SNAP_END = 37,
    HI_MSG_SNAP_MMAP = 44,  /* after SNAP_HIST; absent from older agents */
    HI_MSG_SNAP_NODES = 45, /* hi_snap_node[]: stack nodes (HI_SNAP_WANT_NODES) */
    HI_MSG_SNAP_STACKS = 46,/* stacks as nodes (varints), after those nodes */
    HI_MSG_SNAP_WALKS = 47, /* hi_snap_walks, after SNAP_MMAP (HI_SNAP_WANT_WALKS) */
    HI_MSG_ALLOC_STATS = 48,
    HI_MSG_TRIM_DONE = 49,
    HI_MSG_SNAP_PYMALLOC = 52, /* hi_snap_pymalloc, after SNAP_MMAP (HI_SNAP_WANT_PYMALLOC),
                                  only from a Python process */
    HI_MSG_CENSUS_GROUP = 56, /* census: any number, then ROOTs, then END */
    HI_MSG_CENSUS_ROOT = 57,
    HI_MSG_CENSUS_END = 58,
    HI_MSG_CENSUS_READY = 59, /* hi_census_ready: prepared, the cli may stop threads */
    HI_MSG_CENSUS_FORKED = 60,/* hi_census_forked: the copy exists, threads may go */
    HI_MSG_SNAP_PUSH = 61,    /* hi_snap_push, then a whole snapshot (SNAP_BEGIN..SNAP_END)
                                 that nobody asked for: the agent's own, at a fatal
                                 signal or at memory pressure (issue 16) */
    HI_MSG_CENSUS_PYTHON = 72, /* hi_census_python: a CPython process's objects (issue 29),
                                  after the ROOTs, then its PYTYPEs, then END */
    HI_MSG_CENSUS_PYTYPE = 73, /* hi_census_pytype: one type's objects */
    HI_MSG_SNAP_PYTHON = 80,   /* hi_snap_python, after SNAP_MMAP (HI_SNAP_WANT_RUNTIME_FRAMES) */
    HI_MSG_SNAP_PYCODE = 81,   /* hi_snap_pycode entries, before the stacks that name them */
};

/* What a stack allocated (issue 14). HI_KIND_MALLOC is the malloc family;
 * HI_KIND_MMAP is anonymous memory mapped directly with mmap/mremap by the
 * program (not by an allocator module: those calls are the allocator's). */
enum hi_kind {
    HI_KIND_MALLOC = 0,
    HI_KIND_MMAP = 1,
    HI_KIND_PYMALLOC = 2, /* CPython's objects and small blocks (its MEM and OBJ
                             domains) served inside its arenas, which are
                             HI_KIND_MMAP stacks: not to be added to them */
    HI_KIND_COUNT
};

/* Which allocator the patched slots forward to (hi_alloc_stats.allocator). */
enum hi_allocator {
    HI_ALLOC_UNKNOWN = 0,   /* no family, or a module heapinject cannot read */
    HI_ALLOC_GLIBC = 1,
    HI_ALLOC_JEMALLOC = 2,
    HI_ALLOC_TCMALLOC = 3,
    HI_ALLOC_MIMALLOC = 4,
};

/* Which fields of hi_alloc_stats the allocator gave (bit per field). */
enum hi_alloc_field {
    HI_AF_IN_USE = 1u << 0,
    HI_AF_FREE = 1u << 1,
    HI_AF_RELEASABLE = 1u << 2,
    HI_AF_MMAPPED = 1u << 3,
    HI_AF_MAPPED = 1u << 4,
    HI_AF_RESIDENT = 1u << 5,
    HI_AF_ACTIVE = 1u << 6,
    HI_AF_RETAINED = 1u << 7,
    HI_AF_METADATA = 1u << 8,
    HI_AF_UNMAPPED = 1u << 9,
    HI_AF_ARENAS = 1u << 10,
    HI_AF_CACHES = 1u << 11,
};

#pragma pack(push, 1)

struct hi_msg_header {
    uint32_t magic;   /* HI_PROTO_MAGIC */
    uint16_t version; /* HI_PROTO_VERSION */
    uint16_t type;    /* enum hi_msg_type */
    uint32_t length;  /* bytes of body that follow */
};

/* HELLO from the client: body is hi_hello_client. */
struct hi_hello_client {
    uint32_t version;
};

/* HELLO from the agent. */
struct hi_hello {
    uint32_t version;
    int32_t pid;            /* getpid() inside the target */
    uint64_t rate;          /* current mean sampling interval in bytes */
    uint64_t attach_ns;     /* CLOCK_MONOTONIC when the hooks went live */
    uint64_t now_ns;        /* CLOCK_MONOTONIC now (to compute ages/durations) */
    uint64_t ttl_ns;        /* 0 = none; otherwise agent detaches at attach+ttl
                               unless a client owns the session */
    uint32_t slots_patched; /* GOT slots rewritten */
    uint32_t modules_patched;
    uint32_t owned;         /* 1 if some connection owns the session */
    uint32_t tick_ms;       /* interval of TICK messages */
};

/* SET_RATE body. rate >= 1. */
struct hi_set_rate {
    uint64_t rate;
};

/* ACK body: echoes the type acknowledged. */
struct hi_ack {
    uint16_t type;
};

/* ERROR body: a code (negative errno) and a NUL-padded message. */
struct hi_error {
    int32_t code;
    char message[120];
};

/* Totals since attach. raw_* are exact counts of sampled allocations;
 * est_* are the unbiased estimates (sum over samples of s/p and 1/p).
 * exact_* need no sampling: every hooked call counts them. */
struct hi_totals {
    uint64_t exact_alloc_bytes, exact_alloc_calls;
    uint64_t exact_free_bytes, exact_free_calls;   /* frees of any block, size via
                                                      malloc_usable_size */
    uint64_t est_alloc_bytes, est_alloc_objects;  /* of blocks allocated since attach */
    uint64_t est_free_bytes, est_free_objects;    /* of sampled blocks freed */
    uint64_t est_live_bytes, est_live_objects;
    uint64_t raw_samples;       /* sampled allocations */
    uint64_t dropped_samples;   /* samples lost to a full table or map */
    uint64_t buckets;           /* distinct stacks */
    uint64_t payload_mem_bytes; /* payload's own mmap'ed memory; 0 in the snapshot a process
                                 * leaves as it ends (last_snapshot.h): it ends with it */
};

/* TICK: pushed every tick_ms once WATCH was sent. */
struct hi_tick {
    uint64_t now_ns;
    uint64_t rate;
    struct hi_totals totals;
    uint64_t rss_bytes;         /* from /proc/self/statm */
};

/* Appended to a TICK when the cli's WATCH body asked for it
 * (HI_WATCH_WANT_TICK_TOP): the stacks whose estimated live bytes rose
 * most since the previous tick, most first, so that a chart of the top
 * growing stacks covers the whole session and not only the
 * HI_GROWTH_POINTS ticks a bucket's growth points keep (issue 30).
 * bucket is the stack's index in the order SNAP_BUCKET/SNAP_STACKS send
 * them (the same index every snapshot: buckets are never removed). An
 * older agent ignores the flag and sends the TICK alone; a reader accepts
 * a longer trailer (fields are only ever added at the end). */
#define HI_TICK_TOP 4u
#define HI_WATCH_WANT_TICK_TOP 256u /* in WATCH's hi_snapshot_req.flags */
struct hi_tick_top_entry {
    uint32_t bucket;
    uint32_t reserved;
    int64_t grew;               /* est_live_bytes now minus at the last tick */
    uint64_t live;              /* est_live_bytes now */
};
struct hi_tick_top {
    uint32_t ntop;              /* <= HI_TICK_TOP */
    uint32_t reserved;
    struct hi_tick_top_entry top[HI_TICK_TOP];
};

/* After the hi_tick_top, from an agent that keeps them (the TICK's length
 * says; an older one ends at the hi_tick_top): the buckets that were among
 * the top risers at some tick, at most HI_TICK_KEPT (those among the top
 * most recently), each with its estimated live bytes now, so that a chart
 * draws a stack's line on after it stopped rising, flat or falling. */
#define HI_TICK_KEPT 8u
struct hi_tick_kept_entry {
    uint32_t bucket;
    uint32_t reserved;
    uint64_t live;              /* est_live_bytes now */
};
struct hi_tick_kept {
    uint32_t nkept;             /* <= HI_TICK_KEPT */
    uint32_t reserved;
    struct hi_tick_kept_entry kept[HI_TICK_KEPT];
};

/* SNAP_BEGIN */
struct hi_snap_begin {
    int32_t pid;
    uint32_t nthreads;
    uint64_t rate;
    uint64_t attach_ns;
    uint64_t now_ns;
    uint64_t nbuckets;
    uint64_t rss_bytes;
    struct hi_totals totals;
};

/* SNAP_THREAD: one per thread that has called a hooked function, live or
 * exited (exited threads are folded into tid 0, name "(exited)"). */
struct hi_snap_thread {
    int32_t tid;
    uint32_t alive;
    char name[HI_THREAD_NAME_LEN];
    uint64_t alloc_bytes, alloc_calls, free_bytes, free_calls;
};

/* A frame on the wire is a 64-bit word, (kind, value): the top byte is
 * the kind, the rest its value (docs/DESIGN-NOTES.md, "Python frames in
 * samples"). Kind 0 is a native return address, so every frame an agent
 * sends today is unchanged; user-space addresses stay below 2^56. */
#define HI_FRAME_KIND_SHIFT 56
#define HI_FRAME_VALUE_MASK ((UINT64_C(1) << HI_FRAME_KIND_SHIFT) - 1)
enum hi_frame_kind {
    HI_FRAME_NATIVE = 0,
    HI_FRAME_PYTHON = 1, /* value: code id << 32 | position (see below) */
};
static inline uint32_t hi_frame_kind(uint64_t w)
{
    return (uint32_t)(w >> HI_FRAME_KIND_SHIFT);
}
static inline uint64_t hi_frame_python(uint32_t code_id, uint32_t pos)
{
    return ((uint64_t)HI_FRAME_PYTHON << HI_FRAME_KIND_SHIFT) | ((uint64_t)(code_id & 0xffffffu) << 32) | pos;
}

/* A Python frame's position is its line (0: unknown), found at sample
 * time from the code's line table, so that two lines are two stacks. */
static inline uint32_t hi_frame_python_code(uint64_t w)
{
    return (uint32_t)(w >> 32) & 0xffffffu;
}
static inline uint32_t hi_frame_python_line(uint64_t w)
{
    return (uint32_t)w;
}
/* A Python frame word of this code id is no code: it marks a stack cut at
 * HI_MAX_FRAMES (a chain deeper than the bound keeps its innermost frames,
 * and this word stands last in place of the callers not kept). */
#define HI_PYCODE_CUT 0xffffffu

/* SNAP_PYTHON (issue 29): whether the target's Python frames are read, and
 * how the samples went. Sent once, after SNAP_MMAP (and SNAP_WALKS), when
 * the cli set HI_SNAP_WANT_RUNTIME_FRAMES. A reader takes the fields it
 * knows from a longer body. */
enum hi_python_state {
    HI_PYTHON_NONE = 0,     /* not a Python process */
    HI_PYTHON_READ = 1,     /* frames are read (minor: its version) */
    HI_PYTHON_UNREAD = 2,   /* a Python whose frames are not read: why */
};
struct hi_snap_python {
    uint32_t state;         /* enum hi_python_state */
    uint32_t minor;         /* 3.minor, 0 when not known */
    uint64_t with_frames;   /* samples that carry Python frames */
    uint64_t no_state;      /* samples on threads holding no Python state */
    uint64_t not_valid;     /* samples whose chain did not validate: dropped */
    uint64_t unnamed;       /* Python frames whose code could not be copied
                               (table full, or a name not read): "?" */
    uint64_t codes;         /* code objects copied */
    uint64_t unplaced;      /* of with_frames, samples whose native stack
                               holds no frame of the eval loop (a native walk
                               cut short): their Python frames follow the
                               native ones */
    char why[160];          /* HI_PYTHON_UNREAD: one line, NUL-terminated */
    /* Appended (an older agent's body ends at why: these read as 0). */
    uint64_t cut;           /* of with_frames, stacks cut at HI_MAX_FRAMES
                               (their last word HI_PYCODE_CUT) */
    uint64_t subinterp;     /* samples on a thread running a sub-interpreter
                               (its frames are not read): native only */
};

/* SNAP_PYCODE: a whole number of entries, each this header followed by
 * name_len bytes of qualname and file_len bytes of file name (no NULs).
 * An entry names the code id of Python frame words; ids never change
 * within a session. */
struct hi_snap_pycode {
    uint32_t id;
    uint32_t firstlineno;
    uint16_t name_len, file_len;
};

/* SNAP_HIST: exact allocation counts per power-of-two size class. */
struct hi_snap_hist {
    uint64_t calls[HI_HIST_CLASSES];
    uint64_t bytes[HI_HIST_CLASSES];
};

/* SNAP_BUCKET: one stack. Followed in the same body by nframes uint64_t PCs,
 * innermost first. The payload drops its own frames, so every PC is a
 * return address: the cli subtracts 1 from each before looking it up (so a
 * call at the end of a function is not attributed to the next one). */
struct hi_snap_bucket {
    uint64_t raw_live_bytes, raw_live_objects;   /* sampled blocks still live */
    uint64_t raw_alloc_bytes, raw_alloc_objects; /* all sampled blocks */
    uint64_t est_live_bytes, est_live_objects;   /* unbiased estimates */
    uint64_t est_alloc_bytes, est_alloc_objects;
    uint64_t oldest_live_ns;   /* alloc time (CLOCK_MONOTONIC) of the oldest
                                  live sampled block, 0 if none live */
    uint64_t live_age_sum_ms;  /* sum over live sampled blocks of their age */
    int64_t growth[HI_GROWTH_POINTS]; /* est_live_bytes at the last ticks,
                                         oldest first; unused points are -1 */
    int32_t first_tid;         /* thread that made the first sample */
    uint32_t nframes;          /* <= HI_MAX_FRAMES */
};

/* Trailer after the PCs of a SNAP_BUCKET whose kind is not HI_KIND_MALLOC.
 * Backward-tolerant: a bucket without it (every bucket of an older agent)
 * is HI_KIND_MALLOC; a reader accepts a longer trailer and ignores what it
 * does not know (fields are only ever added at the end). */
struct hi_snap_bucket_ext {
    uint32_t kind;             /* enum hi_kind */
    uint32_t reserved;
};

/* SNAP_MMAP: exact counts of the direct mmap family since attach, sent
 * once after SNAP_HIST. Live and allocated estimates are the sums of the
 * HI_KIND_MMAP buckets (hi_totals' est_* count HI_KIND_MALLOC only). */
struct hi_snap_mmap {
    uint64_t map_calls, map_bytes;     /* anonymous maps (mmap, mremap's new
                                          size), bytes rounded to pages */
    uint64_t unmap_calls;              /* munmap calls of any mapping */
    uint64_t remap_calls;              /* successful mremap calls */
    uint64_t tracked;                  /* sampled mappings (pieces) still live */
    uint64_t dropped;                  /* samples lost to the full table */
};

/* SNAP_PYMALLOC: whether CPython's allocator is sampled (issue 29 item 2;
 * payload/interpose/pymalloc.h). Estimates are the sums of the HI_KIND_PYMALLOC
 * stacks. */
struct hi_snap_pymalloc {
    int32_t status;  /* 1: sampled; 0: not yet (the GIL is being waited for);
                        < 0 (-errno): not sampled, `why` says why */
    uint32_t minor;  /* 3.minor of the interpreter, 0 when not known */
    char why[152];   /* NUL-padded, one line; also set with status 1 when
                        something is worth saying */
};

/* SNAP_WALKS: how the stack walks of this session went, so that a report
 * can say when stacks end early. A reader takes the fields it knows from a
 * longer body (later agents may add some). */
struct hi_snap_walks {
    uint64_t walks;     /* stacks captured since attach (samples of both
                           kinds, dropped ones included) */
    uint64_t truncated; /* of those, walks that ended at a frame they could
                           not step: no unwind rule and no frame pointer to
                           guess by (JIT code, hand-written assembly), or a
                           read outside memory; the callers above it are
                           missing from that stack */
    /* The profiler's memory budget (payload/arena.h; absent from an older
     * agent's shorter body): the cap on its tables' growth (0: none, no
     * limited memory cgroup) and the samples dropped at it (counted in
     * dropped_samples too). */
    uint64_t budget_bytes;
    uint64_t budget_dropped;
};

/* SNAP_MAPS: a chunk of the target's /proc/self/maps text (several chunks in
 * order make the whole file). Body is raw text, no NUL. */

/* SNAPSHOT_REQ body, optional (an older cli sends none; an older agent
 * ignores it). */
#define HI_SNAP_WANT_NODES 1u /* stacks as SNAP_NODES + SNAP_STACKS (issue 17) */
#define HI_SNAP_WANT_WALKS 2u /* SNAP_WALKS after SNAP_MMAP (a cli that asks knows it) */
/* Frames of kinds other than HI_FRAME_NATIVE, with SNAP_PYTHON and
 * SNAP_PYCODE to name them. Without it an agent sends native frames only
 * (a stack's Python frames are left out). */
#define HI_SNAP_WANT_RUNTIME_FRAMES 4u
#define HI_SNAP_WANT_PYMALLOC 16u /* SNAP_PYMALLOC after SNAP_MMAP (issue 29) */
/* 256 is taken: HI_WATCH_WANT_TICK_TOP, a WATCH body's flag (never a snapshot's) */
struct hi_snapshot_req {
    uint32_t flags;            /* HI_SNAP_* */
    uint32_t reserved;
};

/* Stacks share their outer frames: with HI_SNAP_WANT_NODES each distinct
 * (outer part of a) stack is sent once, as a node, and a stack is the
 * node of its innermost frame. Node ids count from 1 in the order nodes
 * are sent (0 is the empty stack); node n is the stack
 * [pc of n] + the stack of its parent, and its parent was sent before it.
 * A SNAP_NODES body is a whole number of hi_snap_node. A SNAP_STACKS body
 * is a whole number of stacks, each HI_SNAP_STACK_FIELDS varints
 * (common/varint.h), in this order:
 *   node (the innermost frame's; 0: no frames), nframes (the node's depth,
 *   <= HI_MAX_FRAMES), kind (enum hi_kind), zigzag(first_tid),
 *   raw_live_bytes, raw_live_objects, raw_alloc_bytes, raw_alloc_objects,
 *   est_live_bytes, est_live_objects, est_alloc_bytes, est_alloc_objects,
 *   oldest_live_ns, live_age_sum_ms, zigzag(growth[0]) .. zigzag(growth[7])
 * (the fields of hi_snap_bucket: mostly small numbers, 40-odd bytes
 * instead of 152). A stack names only nodes sent before it. SNAP_BUCKETs
 * may still come in between (stacks past the agent's node table), and
 * SNAP_END's buckets_sent counts both. */
#define HI_SNAP_STACK_FIELDS (14u + HI_GROWTH_POINTS)

struct hi_snap_node {
    uint64_t pc;               /* a return address, as in SNAP_BUCKET */
    uint32_t parent;           /* 0, or a node id sent before */
};

/* SNAP_END: body is hi_snap_end. */
struct hi_snap_end {
    uint64_t buckets_sent;
};

/* ALLOC_STATS: the allocator's own figures, read by the agent thread (never
 * a hook) through the functions the allocator exports: glibc mallinfo2,
 * jemalloc mallctl after "epoch", tcmalloc MallocExtension, mimalloc
 * mi_process_info. A field counts only when its HI_AF_ bit is in `fields`.
 * status < 0 (with `why`) when the allocator could not be read. */
struct hi_alloc_stats {
    uint32_t allocator;  /* enum hi_allocator */
    uint32_t fields;     /* enum hi_alloc_field bits */
    int32_t status;      /* 0, or -errno: nothing below but `why` is valid */
    uint32_t arenas;     /* glibc arenas, jemalloc arenas.narenas */
    uint64_t read_ns;    /* how long the read took inside the target */
    uint64_t in_use;     /* bytes handed out (glibc uordblks+hblkhd, jemalloc
                            stats.allocated, tcmalloc current_allocated_bytes) */
    uint64_t free;       /* free bytes the allocator holds mapped (glibc
                            fordblks, tcmalloc pageheap_free + caches) */
    uint64_t releasable; /* glibc keepcost: free at the top of the main arena */
    uint64_t mmapped;    /* glibc hblkhd: blocks that are mappings of their own */
    uint64_t mapped;     /* all memory the allocator has mapped (glibc
                            arena+hblkhd, jemalloc stats.mapped, tcmalloc
                            generic.heap_size, mimalloc committed) */
    uint64_t resident;   /* jemalloc stats.resident: the allocator's own
                            count of resident pages (others: smaps says) */
    uint64_t active;     /* jemalloc stats.active */
    uint64_t retained;   /* jemalloc stats.retained (virtual, not resident) */
    uint64_t metadata;   /* jemalloc stats.metadata, tcmalloc metadata_bytes */
    uint64_t unmapped;   /* tcmalloc pageheap_unmapped_bytes (released) */
    uint64_t caches;     /* tcmalloc thread+central+transfer cache free bytes */
    uint64_t module_base;/* load address of the allocator's module (the cli
                            names it from the maps) */
    char why[96];        /* NUL-padded: why it could not be read */
};

/* TRIM_DONE: the allocator was asked to give its free memory back. */
struct hi_trim_done {
    uint32_t allocator;  /* enum hi_allocator */
    int32_t status;      /* 0 done; -ENOTSUP no such call; other -errno */
    uint64_t took_ns;    /* time the call took inside the target */
    char how[48];        /* the call made ("malloc_trim(0)"), NUL-padded */
    char why[96];        /* when status < 0: why nothing was done */
};

/* Census of the heap as it is (issue 15). The agent forks a copy-on-write
 * image of the process that walks glibc's heap and marks what the roots
 * reach (payload/census.c); the answer is GROUPs, ROOTs and one END. */
#define HI_CENSUS_PREVIEW 32u
#define HI_CENSUS_STACK_FRAMES 8u /* PCs of a group's top since-attach stack */

/* In-use blocks of one usable size whose first word is one value that
 * points into a module's image (`first_word`, a vtable for a C++ object;
 * 0 when it does not), split into reachable and unreachable. */
struct hi_census_group {
    uint64_t size;          /* usable bytes of each block */
    uint64_t first_word;    /* 0, or an address inside a loaded module */
    uint64_t blocks;
    uint64_t unreachable_blocks;
    uint64_t since_attach_blocks; /* blocks whose address was sampled since attach */
    uint64_t since_attach_bytes;  /* sampled estimate of bytes allocated since attach */
    uint8_t preview[HI_CENSUS_PREVIEW];             /* first bytes of one block */
    uint8_t unreachable_preview[HI_CENSUS_PREVIEW]; /* of one unreachable block */
    /* Of the group's blocks sampled since attach: the call stack that
     * allocated most of their estimated bytes (top_stack_nframes 0: none
     * sampled), its PCs innermost first, and those bytes. */
    uint64_t top_stack_bytes;
    uint32_t top_stack_nframes;
    uint32_t reserved;
    uint64_t top_stack[HI_CENSUS_STACK_FRAMES];
};

enum hi_census_root_kind {
    HI_ROOT_GLOBAL = 0,   /* a module's writable data; `addr` is the word */
    HI_ROOT_STACK = 1,    /* a thread's stack from its stack pointer */
    HI_ROOT_TLS = 2,
    HI_ROOT_REGISTER = 3,
    HI_ROOT_MAPPING = 4,  /* other anonymous writable memory (runtimes' heaps,
                             stacks of threads whose stack pointer was not
                             seen, the main thread's static TLS) */
    HI_ROOT_UNCOPIED = 5, /* memory the fork does not copy (MADV_DONTFORK,
                             MADV_WIPEONFORK: V8's heap), read by the agent
                             in the running process right after the fork */
    HI_ROOT_KERNEL = 6,   /* words the kernel keeps for the process: the data
                             of its epoll registrations (fdinfo) */
    HI_ROOT_SHARED = 7,   /* not a root: the blocks reachable from more than
                             one root, credited to none of them (one record,
                             last; an older payload sends none) */
};

/* A root and what marking reached first through it. */
struct hi_census_root {
    uint32_t kind;          /* enum hi_census_root_kind */
    int32_t tid;            /* HI_ROOT_STACK: the thread */
    uint64_t addr;          /* GLOBAL: the word; others: start of the range */
    uint64_t end;           /* end of the range scanned */
    uint64_t retained_bytes;
    uint64_t retained_blocks;
    char thread[HI_THREAD_NAME_LEN];
    /* GLOBAL: the block the word points to, through which it retains the
     * rest: its first word when that points into a module (a C++
     * object's vtable; else 0) and its usable size (0: none) */
    uint64_t via_first_word;
    uint64_t via_size;
};

struct hi_census_end {
    int32_t status;         /* 0, or -errno: `why` says what stopped it */
    uint32_t allocator;     /* enum hi_allocator */
    uint64_t in_use_blocks, in_use_bytes;   /* usable bytes of in-use blocks */
    uint64_t free_blocks, free_bytes;       /* free chunks, top, fastbins, tcache */
    uint64_t tcache_blocks, tcache_bytes;   /* of which in tcache */
    uint64_t fastbin_blocks, fastbin_bytes; /* of which in fastbins */
    uint64_t mmapped_blocks, mmapped_bytes; /* in-use blocks that are mappings */
    uint64_t unreachable_blocks, unreachable_bytes;
    uint64_t metadata_bytes;  /* tcache structures, fenceposts, headers */
    uint64_t heap_bytes;      /* bytes walked: arenas' heaps + mmapped chunks */
    uint32_t arenas, heaps;
    uint64_t stall_ns;        /* the fork: how long the process's memory map was held */
    uint64_t scan_ns;         /* walk + mark, in the copy */
    uint64_t root_bytes;      /* bytes of roots scanned */
    uint32_t threads, threads_with_sp; /* threads seen; of which stack pointer known */
    uint32_t groups_dropped;  /* groups beyond the table, folded into first_word 0 */
    uint64_t mallinfo_free;   /* glibc's own fordblks, taken before the fork */
    uint64_t mallinfo_mmapped;/* hblkhd */
    uint32_t threads_with_regs; /* of which registers were read (cli, ptrace) */
    uint32_t tls_roots;       /* threads whose static TLS was a root of its own */
    uint32_t layout_from_debuginfo; /* malloc_state offsets and main_arena from libc's debug information */
    uint32_t untouched_mib;   /* of the anonymous mappings scanned as roots: MiB never
                                 touched (all zeros), skipped (0 from an older payload) */
    /* Mappings the fork does not copy (HI_ROOT_UNCOPIED), MiB rounded up:
     * all of them, and those not read (out of room or time: blocks only
     * they hold count unreachable). Taken from why's old last 8 bytes, so
     * the message keeps its size; 0 from an older payload. */
    uint32_t uncopied_mib, uncopied_missed_mib;
    char why[152];
};

/* A census of a CPython process (issue 29): its objects by type, found in
 * pymalloc's pools and in glibc's blocks of the copy
 * (payload/census/py_*.c). */
struct hi_census_python {
    int32_t status;          /* 0 counted; -ENOTSUP etc.: nothing counted, `why` says why */
    uint32_t version;        /* PY_VERSION_HEX (0x030b02f0); only 3.N (micro 0) unless exact */
    uint32_t version_exact;  /* 1: from Py_Version; 0: major.minor from the library's name */
    uint32_t pools;          /* pymalloc pools in use walked */
    uint32_t pools_skipped;  /* pools whose header or free list did not check out: not counted */
    uint32_t types;          /* PYTYPE records that follow */
    uint32_t types_dropped;  /* types past the table, folded into the last record */
    uint32_t reserved;
    uint64_t pool_used_blocks, pool_used_bytes;   /* blocks in use in those pools */
    uint64_t pool_objects, pool_object_bytes;     /* of which objects (the rest: buffers) */
    uint64_t malloc_objects, malloc_object_bytes; /* objects that are glibc blocks (larger ones) */
    char why[192];           /* status < 0: why; else what it could not see */
};

struct hi_census_pytype {
    uint64_t objects;
    uint64_t bytes;          /* of the blocks that hold them */
    char name[112];          /* as Python prints it: "dict", "module.Class" */
};

/* Registers taken as roots (issue 15): the cli stops every thread but the
 * agent with ptrace between READY and FORKED, reads its registers and
 * sends them before REQ; the fork happens while they are still stopped,
 * so the copy holds exactly what those registers point to. */
/* CENSUS_PREP's body, when the cli found libc's debug information:
 * glibc's struct malloc_state as it describes it, and main_arena's
 * address in the process. The walker then uses these offsets instead of
 * its built-in ones and checks main_arena against what it finds. */
struct hi_census_layout {
    uint64_t main_arena;
    uint32_t fastbins, top, bins, next, system_mem, size; /* member offsets; sizeof */
    uint32_t nfastbins;
    uint32_t reserved;
};

/* struct malloc_state on x86-64 as glibc 2.26 and later lay it out
 * (sizeof 2200): the walker's fallback without debug information, and
 * the cli's when main_arena's symbol (from the debug file's symbol
 * table, read without its compressed DWARF) has exactly this size. */
#define HI_CENSUS_LAYOUT_GLIBC_X86_64                                                    \
    {                                                                                    \
        .fastbins = 16, .nfastbins = 10, .top = 96, .bins = 112, .next = 2160,           \
        .system_mem = 2184, .size = 2200                                                 \
    }

struct hi_census_ready {
    int32_t agent_tid;      /* the thread the cli must not stop */
    uint32_t reserved;
};

#define HI_CENSUS_GPRS 16u
/* CENSUS_REGS carries 1 to this many threads' registers back to back: one
 * message a thread made the agent read 10,001 messages while the threads
 * were held (1.2 s of a 1.9 s hold here). */
#define HI_CENSUS_REGS_PER_MSG 28u
struct hi_census_regs {
    int32_t tid;
    uint32_t reserved;
    uint64_t tp;                   /* fs_base: the thread pointer (its TCB) */
    uint64_t gpr[HI_CENSUS_GPRS];  /* rax rbx rcx rdx rsi rdi rbp rsp r8-r15 */
};

struct hi_census_forked {
    uint64_t fork_ns;       /* how long the fork itself took */
};

/* Why the agent pushed a snapshot (hi_snap_push.reason). */
enum hi_push_reason {
    HI_PUSH_SIGNAL = 1,     /* a thread got a fatal signal; it waits in our handler */
    HI_PUSH_PRESSURE = 2,   /* memory usage crossed the high-water mark */
};

/* Which measure of memory pressure (hi_snap_push.pressure_kind). */
enum hi_pressure_kind {
    HI_PRESSURE_NONE = 0,
    HI_PRESSURE_CGROUP_V1 = 1, /* memory.usage_in_bytes of memory.limit_in_bytes */
    HI_PRESSURE_CGROUP_V2 = 2, /* memory.current of memory.max */
    HI_PRESSURE_SYSTEM = 3,    /* MemTotal - MemAvailable of MemTotal */
};

/* SNAP_PUSH: the snapshot that follows was taken because of this. */
struct hi_snap_push {
    uint32_t reason;        /* enum hi_push_reason */
    int32_t signo;          /* HI_PUSH_SIGNAL: the signal, its si_code and thread */
    int32_t si_code;
    int32_t tid;
    uint32_t pressure_kind; /* HI_PUSH_PRESSURE: enum hi_pressure_kind */
    uint32_t reserved;
    uint64_t usage_bytes;   /* HI_PUSH_PRESSURE: usage and limit, in bytes */
    uint64_t limit_bytes;
    uint64_t now_ns;        /* CLOCK_MONOTONIC when it was decided */
};

#pragma pack(pop)

#endif /* HI_COMMON_PROTO_H */
