/* breakdown.h - the resident bytes of a process split into what holds
 * them: the allocator's blocks in use, the allocator's free memory, other
 * anonymous mappings, thread stacks, files, the rest.
 *
 * Two sources, each right about something different: smaps (the kernel)
 * knows what is resident in each mapping but not what a block is; the
 * allocator (ALLOC_STATS from the agent) knows what it handed out but not
 * which of its pages are resident. The split:
 *   glibc: its mappings are found in smaps ([heap], the arenas' 64 MiB
 *     heaps that start with heap_info, blocks mmapped on their own whose
 *     chunk header says IS_MMAPPED), so what it holds resident is the
 *     kernel's figure; in use inside the arenas is mallinfo2's, capped by
 *     the arenas' resident bytes (blocks handed out whose pages were never
 *     touched are not resident: said in a note); mmapped blocks are in use.
 *   jemalloc, tcmalloc, mimalloc: their own resident figure is taken out
 *     of the anonymous memory; in use is theirs, capped likewise.
 *   no allocator figures: the glibc heap is still found (heap_unsplit),
 *     or all anonymous memory is "unplaced" when even that cannot be told.
 * The parts always add up to the sum of smaps' Rss.
 */
#ifndef HI_CLI_MEMORY_BREAKDOWN_H
#define HI_CLI_MEMORY_BREAKDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/memory/smaps.h"
#include "cli/process/image.h" /* cli_mem_reader */
#include "common/proto.h"

enum cli_mem_part {
    CLI_MEM_HEAP_IN_USE,  /* blocks the allocator handed out, resident */
    CLI_MEM_HEAP_FREE,    /* resident memory the allocator holds, not handed out */
    CLI_MEM_HEAP_UNSPLIT, /* the allocator's memory when its figures are unknown */
    CLI_MEM_MMAP,         /* anonymous mappings that are not the allocator's */
    CLI_MEM_STACKS,       /* thread stacks */
    CLI_MEM_FILES,        /* file-backed code and data of modules (and their .bss) */
    CLI_MEM_OTHER,        /* shared memory, vdso, ... */
    CLI_MEM_UNPLACED,     /* anonymous memory that is either heap or mmap: unknown */
    CLI_MEM_NPARTS
};

#define CLI_MEM_TOP_MODULES 5
#define CLI_MEM_MAX_NOTES 8

struct cli_mem_module {
    char path[256];
    uint64_t rss;
};

struct cli_memory {
    bool valid;                 /* smaps was read */
    int pid;                    /* the process (notes name it) */
    uint64_t rss;               /* sum of smaps' Rss */
    uint64_t parts[CLI_MEM_NPARTS];

    /* What smaps says of the allocator's memory (glibc) */
    uint64_t heap_smaps_rss;    /* [heap] + arenas + mmapped blocks, resident */
    uint64_t heap_mmapped_rss;  /* of which mmapped blocks */
    unsigned glibc_arenas;      /* arenas found in the maps (main arena included) */
    uint64_t untouched;         /* in use by the allocator's count, not resident */
    uint64_t anon_rss;          /* every anonymous mapping but stacks */
    uint64_t mmap_dontfork;     /* of parts[MMAP] (or UNPLACED): mappings marked MADV_DONTFORK
                                   (smaps' VmFlags dc): V8's heap and code in node */

    bool have_alloc;            /* alloc holds the agent's ALLOC_STATS */
    struct hi_alloc_stats alloc;
    char alloc_module[256];     /* path of the allocator's module, "" unknown */

    struct cli_mem_module top[CLI_MEM_TOP_MODULES]; /* largest file parts */
    size_t ntop;
    size_t nmodules;            /* modules with resident file bytes */

    /* Runtimes recognised from the maps (notes name them). */
    bool python, jvm, node, go;
    /* The executable's own allocator (it defines malloc), or "": its heap
     * is under mmap and nothing of ours can split it. */
    char exe_alloc[96];
    bool musl;                  /* musl's malloc (collect.c): its memory is [heap] and
                                   anonymous mappings alike, all counted as heap */

    char *notes[CLI_MEM_MAX_NOTES]; /* owned */
    size_t nnotes;

    double read_ms;             /* smaps read + parse + classification */
};

/* The resident bytes of [lo, hi) in the target (its pagemap), or -1 when
 * they cannot be told. */
typedef int64_t (*cli_mem_resident)(void *ctx, uint64_t lo, uint64_t hi);

/* Splits s into m (zeroed first). alloc: the allocator's figures, or NULL
 * when unknown. read/ctx: reads the target's memory to check glibc's
 * headers; NULL when it cannot be read (then the heap is told by its shape
 * alone). resident/ctx: splits the Rss of a mapping that holds more than
 * one thing (a module's .bss the kernel merged with glibc's mmapped
 * blocks after it); NULL: shared out by length. sps/nsps: stack pointers
 * of threads (may be 0). */
int cli_memory_split(const struct cli_smaps *s, const struct hi_alloc_stats *alloc, cli_mem_reader read,
                     cli_mem_resident resident, void *ctx, const uint64_t *sps, size_t nsps,
                     struct cli_memory *m);

/* Everything for pid: reads smaps, the threads' stack pointers and, for
 * glibc's headers, /proc/PID/mem. 0 or -errno (m->valid false). */
int cli_memory_read(pid_t pid, const struct hi_alloc_stats *alloc, struct cli_memory *m);

/* Adds a note (printf format); dropped past CLI_MEM_MAX_NOTES. */
void cli_memory_note(struct cli_memory *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Frees the notes. */
void cli_memory_free(struct cli_memory *m);

/* "heap_in_use", ... (JSON keys). */
const char *cli_memory_part_key(enum cli_mem_part part);

/* "glibc", "jemalloc", ... */
const char *cli_memory_allocator_name(uint32_t allocator);

#endif /* HI_CLI_MEMORY_BREAKDOWN_H */
