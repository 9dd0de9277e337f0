/* procmaps.h - the current protection of an address, and whether it is
 * anonymous memory, from the calling thread's /proc maps; opening the
 * process's own /proc files.
 * open/read into a stack buffer: no stdio, no heap. */
#ifndef HI_PAYLOAD_PROCMAPS_H
#define HI_PAYLOAD_PROCMAPS_H

#include <stddef.h>
#include <stdint.h>

/* Opens /proc/thread-self/NAME (read-only, close-on-exec), else
 * /proc/self/NAME (Linux < 3.17); on the agent thread, its own directory
 * (pl_proc_own_start). The calling thread's own view: once the main
 * thread has exited (pthread_exit, a zombie thread-group leader),
 * /proc/self/maps reads empty and statm all zeros, while every live
 * thread's still shows the process. An fd, or -errno (EMFILE: the process
 * is out of descriptors). */
int pl_proc_open_self(const char *name);

/* The agent thread's start (agent thread only, first thing): names it
 * `comm` and finds the /proc directory it reads its own files from,
 * /proc/TID, shown to be this thread (the name written there took,
 * which the kernel allows only within our own thread group, and its
 * status has this tid and pid in a single pid namespace, the /proc
 * mount's); else /proc/self/task/TID. Not under /proc/PID/task/TID
 * when it can be helped: a fork child whose thread has files looked up
 * there costs its reaper about 5 ms of CPU at the wait (the kernel's
 * invalidation of the leader's /proc entries spins until the exiting
 * thread has dropped its own; bench/fork_cost.py), where /proc/TID costs
 * nothing measurable. Returns whether /proc/TID is the directory. */
int pl_proc_own_start(const char *comm);

/* The same in a followed fork child's agent: the directory's form is the
 * one the parent's agent found (its status is not read again: a backend
 * under pgbench -C read it twice at its agent's start), the name written
 * the same way. */
int pl_proc_own_start_forked(const char *comm);

/* Names the calling thread `comm` through /proc/TID/comm (else, in
 * another pid namespace's /proc, /proc/self/task/TID/comm), for a thread
 * of ours other than the agent (pthread_setname_np from its creator
 * writes /proc/self/task/TID/comm: see pl_proc_own_start). Whether the
 * name took. */
int pl_proc_name_self(const char *comm);

/* Opens NAME in the directory pl_proc_own_start found (read-only,
 * close-on-exec). Agent thread only. An fd or -errno. */
int pl_proc_own_open(const char *name);

/* PROT_* of the mapping containing addr into *prot. 0, -ENOENT (not
 * mapped) or -errno from open/read. */
int pl_maps_prot(uintptr_t addr, int *prot);

/* The PROT_* of each of n pages (page-aligned addresses in ascending
 * order) into prot[i], -1 for a page no mapping holds, from one read of
 * the maps: a read costs 0.1 to 1 ms in a process with many mappings,
 * and a process's GOTs are on about one page per module (PostgreSQL: 55
 * modules). 0 or -errno from open/read (then every prot[i] is -1). */
int pl_maps_prot_pages(const uintptr_t *pages, size_t n, signed char *prot);

/* [*lo, *hi): the readable mapping containing addr. 0, -EACCES (not
 * readable), -ENOENT or -errno as pl_maps_prot. */
int pl_maps_range(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);

/* True when addr lies in an anonymous mapping (no file: inode 0, no path
 * or an "[anon:...]" name). False when not mapped or unreadable. */
int pl_maps_anon(uintptr_t addr);

#endif /* HI_PAYLOAD_PROCMAPS_H */
