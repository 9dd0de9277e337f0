/* proc.h - what the cli reads about a target from /proc/PID. */
#ifndef HI_CLI_PROC_H
#define HI_CLI_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The process exists and one of its threads is not a zombie (its main
 * thread may have exited: pthread_exit in main). */
/* Reads a small /proc file into buf (NUL-terminated). Returns bytes or -errno. */
ssize_t cli_proc_read_small(const char *path, char *buf, size_t len);

bool cli_proc_alive(pid_t pid);

/* A kernel thread (PF_KTHREAD in /proc/PID/stat's flags): no program, no
 * memory of its own to profile or split. */
bool cli_proc_kernel_thread(pid_t pid);

/* After the agent hung up: did the process exit? A process being killed
 * closes its files (the socket) before /proc shows it as a zombie, so this
 * looks for up to 2 s. True when it is gone. */
bool cli_proc_exited_after_hangup(pid_t pid);

/* The process's maps text, read through a live thread (a zombie main
 * thread's maps read empty). Malloc'd, NUL-terminated, length in *len;
 * NULL when unreadable or empty. */
char *cli_proc_maps_text(pid_t pid, size_t *len);

/* The path of musl's libc/dynamic linker when the process runs on musl
 * (a mapping named ld-musl-ARCH.so.1, libc.musl-ARCH.so.1 or
 * ARCH-linux-musl/libc.so) into buf;
 * false otherwise or when its maps cannot be read. */
bool cli_proc_musl(pid_t pid, char *buf, size_t len);

/* The same in maps already read (inj_maps_read: paths without " (deleted)"). */
struct inj_maps;
bool cli_proc_musl_in(const struct inj_maps *maps, char *buf, size_t len);

/* Effective uid of the process (from /proc/PID/status). 0 or -errno. */
int cli_proc_uid(pid_t pid, uid_t *uid);

/* 1 when pid lives in the cli's mount namespace, 0 when it does not, -errno
 * when that cannot be told (no permission to read /proc/PID/ns/mnt). */
int cli_proc_same_mntns(pid_t pid);

/* The process's name (comm), NUL-terminated, control characters shown as
 * \xNN (cli_fmt_printable: the process chooses its name, and it is only
 * ever shown); "?" when unreadable. 64 bytes hold any. */
const char *cli_proc_comm(pid_t pid, char *buf, size_t len);
/* The same, as the process named itself (for records that escape at
 * output: the census keeps it so, since a saved census reads back raw). */
const char *cli_proc_comm_raw(pid_t pid, char *buf, size_t len);

/* The command line with arguments separated by spaces, truncated to len.
 * Returns buf ("" when unreadable). */
const char *cli_proc_cmdline(pid_t pid, char *buf, size_t len);

struct cli_proc_mem {
    uint64_t rss, pss, uss;  /* bytes; uss = Private_Clean + Private_Dirty */
    uint64_t swap;
    bool have_pss;           /* smaps_rollup was readable */
};

/* Memory of pid from /proc/PID/smaps_rollup (falls back to statm for RSS).
 * 0 or -errno. */
int cli_proc_mem(pid_t pid, struct cli_proc_mem *m);

/* RSS split by what backs it, from the kernel's counters in
 * /proc/PID/status (RssAnon, RssFile, RssShmem: no walk of the mappings,
 * cheap enough for every tick of a session). 0 or -errno. */
struct cli_proc_rss_split {
    uint64_t anon, file, shmem; /* bytes */
};
int cli_proc_rss_split(pid_t pid, struct cli_proc_rss_split *r);

/* Name of a thread (/proc/PID/task/TID/comm), escaped like cli_proc_comm;
 * "" when gone. Returns buf. */
const char *cli_proc_thread_name(pid_t pid, pid_t tid, char *buf, size_t len);

#endif /* HI_CLI_PROC_H */
