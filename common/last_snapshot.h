/* last_snapshot.h - the file a profiled process leaves when it ends in
 * `attach` mode (issue 28): PID.last next to its socket PID.sock, owner
 * only (the socket's 0700 directory, mode 0600).
 *
 * Layout: one hi_last_header, then the snapshot exactly as the agent sends
 * it on the socket (common/proto.h framing: SNAP_BEGIN ... SNAP_END), so
 * the cli reads it with the code that reads the socket. Written by the
 * agent (payload/serve/last_snapshot.c) to PID.last.tmp and renamed, so a
 * reader sees a whole file or none; at most HI_LAST_MAX_BYTES (a larger
 * snapshot is not written), HI_LAST_MAX_FILES in a directory. Removed by
 * the `snapshot` that reads it, or after HI_LAST_KEEP_S by the next attach.
 */
#ifndef HI_COMMON_LAST_SNAPSHOT_H
#define HI_COMMON_LAST_SNAPSHOT_H

#include <stdint.h>

#define HI_LAST_MAGIC "HILAST2"        /* 8 bytes with its NUL; 2: ppid added */
#define HI_LAST_SUFFIX ".last"
#define HI_LAST_MAX_BYTES (16u << 20)  /* the file, header included */
#define HI_LAST_MAX_FILES 16           /* in one directory: the writer removes the oldest; with the size, 256 MiB at most in a /tmp that may be RAM */
#define HI_LAST_KEEP_S (24 * 3600)     /* unread and its process gone: the next attach's
                                          sweep removes it (cli_paths_clean_stale) */

enum hi_last_how {
    HI_LAST_EXIT = 1,   /* exit() or a return from main: code is the status */
    HI_LAST_SIGNAL = 2, /* a fatal signal (payload/serve/fatal.h): code is its number */
};

#pragma pack(push, 1)
struct hi_last_header {
    char magic[8];         /* HI_LAST_MAGIC */
    uint32_t version;      /* HI_PROTO_VERSION of the agent that wrote it */
    int32_t pid;           /* getpid() of the process (its pid namespace) */
    uint32_t how;          /* enum hi_last_how */
    int32_t code;          /* exit status or signal number */
    uint64_t realtime_ns;  /* CLOCK_REALTIME when it ended */
    uint64_t start_ticks;  /* /proc/self/stat starttime (0: unknown): a later
                              process with the same pid is not this one */
    int32_t ppid;          /* its parent as it ended (getppid, its pid namespace):
                              the `snapshot` of a tree finds its exited children */
    uint64_t snapshot_bytes; /* bytes after this header */
};
#pragma pack(pop)

/* Whether the header at the start of a file of size bytes says the file
 * is whole: the writer puts the length in last (a PID.last.tmp left by a
 * writer that could not rename it is taken only then). */
static inline int hi_last_header_whole(const struct hi_last_header *h, uint64_t size)
{
    return size >= sizeof(*h) && !__builtin_memcmp(h->magic, HI_LAST_MAGIC, sizeof(h->magic)) &&
           h->snapshot_bytes == size - sizeof(*h);
}

#endif /* HI_COMMON_LAST_SNAPSHOT_H */
