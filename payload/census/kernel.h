/* census_kernel.h - pointers the kernel keeps for the process: the data
 * word of each epoll registration (epoll_event.data).
 *
 * An event loop often gives epoll the address of its connection object as
 * the registration's data and keeps it nowhere else while the connection
 * waits: no scan of memory sees that pointer (LeakSanitizer calls such
 * objects leaked). /proc/self/fdinfo of an epoll descriptor lists every
 * registration with its data word ("tfd: 5 events: 19 data: 7f..."). The
 * agent finds the epoll descriptors when it prepares a census and reads
 * their registrations just before the fork, while the program's threads
 * are held (the census child shares no descriptor of the program's: it
 * drops them all first thing), and the child marks from them as from a
 * root of their own. Only raw system calls and stack buffers.
 *
 * The same look at the descriptors refuses a census that the program
 * would see: a userfaultfd with UFFD_FEATURE_EVENT_FORK gets an event for
 * every fork of the process, with a new userfaultfd for the child, and the
 * fork waits until the program's monitor reads it. */
#ifndef HI_PAYLOAD_CENSUS_KERNEL_H
#define HI_PAYLOAD_CENSUS_KERNEL_H

#include <stdint.h>

#include <stddef.h>

#define PL_KERNEL_MAX_WORDS 65536u
#define PL_KERNEL_MAX_EPOLLS 1024u

struct pl_kernel_words {
    uint32_t n;          /* data words kept */
    uint32_t epolls;     /* epoll descriptors read */
    uint64_t dropped;    /* registrations beyond PL_KERNEL_MAX_WORDS */
    uint32_t n_epoll_fds; /* found by pl_kernel_fds_scan */
    int32_t epoll_fd[PL_KERNEL_MAX_EPOLLS];
    uintptr_t w[PL_KERNEL_MAX_WORDS]; /* last: not zeroed by a read */
};

/* Looks at every descriptor of the calling process once (the census's
 * preparation, the program running): records its epoll descriptors in k
 * (zeroed first) and returns 0, or returns -EPERM with why filled when a
 * census must not be taken (a userfaultfd with UFFD_FEATURE_EVENT_FORK). */
int pl_kernel_fds_scan(struct pl_kernel_words *k, char *why, size_t len);

/* Reads the data word of every registration of the epoll descriptors the
 * scan found (a descriptor since closed or reused reads as nothing). Never
 * fails: what cannot be read is not there. */
void pl_kernel_words_read(struct pl_kernel_words *k);

/* Parses one fdinfo text of an epoll descriptor, appending data words to
 * k. Exposed for the unit test. */
void pl_kernel_words_parse(struct pl_kernel_words *k, const char *text, uint64_t len);

#endif /* HI_PAYLOAD_CENSUS_KERNEL_H */
