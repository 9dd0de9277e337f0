/* smaps.h - the mappings of a process with their resident bytes, from
 * /proc/PID/smaps (one record per VMA: the maps line, then "Key: N kB"
 * lines, of which Rss, Anonymous and Swap are kept). */
#ifndef HI_CLI_MEMORY_SMAPS_H
#define HI_CLI_MEMORY_SMAPS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct cli_smaps_vma {
    uint64_t start, end;     /* [start, end) */
    uint64_t offset;         /* file offset */
    uint64_t inode;          /* 0: not file-backed */
    char perms[5];           /* "rw-p" */
    uint64_t rss, anon, swap;/* bytes */
    bool dontfork;           /* VmFlags "dc": MADV_DONTFORK (V8 marks its heap so) */
    const char *path;        /* NULL for an unnamed mapping; points into the
                                owning cli_smaps's name storage */
};

struct cli_smaps {
    struct cli_smaps_vma *v; /* in address order, as the kernel lists them */
    size_t n, cap;
    char *names;             /* every path, NUL-separated */
    size_t names_len, names_cap;
    uint64_t rss;            /* sum of v[].rss */
};

/* Parses the text of an smaps file (len bytes, need not end in NUL) into s
 * (initialized here). Lines it does not know are skipped. 0, -ENOMEM, or
 * -EINVAL when a mapping line is malformed. */
int cli_smaps_parse(const char *text, size_t len, struct cli_smaps *s);

/* Reads /proc/PID/smaps into s. 0 or -errno (-ENOENT: no such process,
 * -EACCES: not allowed). */
int cli_smaps_read(pid_t pid, struct cli_smaps *s);

void cli_smaps_free(struct cli_smaps *s);

#endif /* HI_CLI_MEMORY_SMAPS_H */
