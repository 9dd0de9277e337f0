/* exe_alloc.h - does the target's executable carry its own allocator?
 *
 * heapinject sees allocations by rewriting GOT slots. A program that links
 * its allocator into the executable (static jemalloc or tcmalloc, Rust's
 * tikv-jemallocator or mimalloc crates) calls it directly: no slot exists
 * for the bulk of its allocations, and a profile of what is left (libc's
 * own calls) would be a misleading picture. We look before we inject, so
 * such a process is never touched.
 */
#ifndef HI_CLI_EXE_ALLOC_H
#define HI_CLI_EXE_ALLOC_H

#include <stddef.h>
#include <sys/types.h>

struct cli_exe_alloc {
    char symbol[64];       /* the defined symbol that gave it away */
    const char *allocator; /* what it belongs to, for the message */
    int go;                /* a Go program: its Go heap is the Go runtime's
                              own (runtime.mallocgc), only cgo's C calls
                              reach malloc */
};

/* Which allocator a function symbol defined in an executable belongs to,
 * or NULL when the name is not an allocator entry point. */
const char *cli_exe_alloc_name(const char *symbol);

/* Scans the defined function symbols of the executable open on fd (not
 * closed). Returns 1 with *out filled when it defines an allocator, 0 when
 * not, -errno when the file is unreadable as ELF. out->go is set either way. */
int cli_exe_alloc_scan(int fd, struct cli_exe_alloc *out);

/* For pid: 0 when heapinject can see its allocations (or we cannot tell;
 * a Go program gets a note on stderr: its C allocations are still worth
 * profiling), otherwise prints why not and returns CLI_EXIT_UNSUPPORTED. */
int cli_exe_alloc_check(pid_t pid);

#endif /* HI_CLI_EXE_ALLOC_H */
