/* census_kernel.h - pointers the kernel keeps for the process: the data
 * word of each epoll registration (epoll_event.data).
 *
 * An event loop often gives epoll the address of its connection object as
 * the registration's data and keeps it nowhere else while the connection
 * waits: no scan of memory sees that pointer (LeakSanitizer calls such
 * objects leaked). /proc/self/fdinfo of an epoll descriptor lists every
 * registration with its data word ("tfd: 5 events: 19 data: 7f..."). The
 * census child reads them before it closes the descriptors it inherited
 * (its epoll descriptors are the program's epoll instances), and marks
 * from them as from a root of their own. Only raw system calls and stack
 * buffers: the child must not malloc. */
#ifndef HI_PAYLOAD_CENSUS_KERNEL_H
#define HI_PAYLOAD_CENSUS_KERNEL_H

#include <stdint.h>

#define PL_KERNEL_MAX_WORDS 65536u

struct pl_kernel_words {
    uint32_t n;          /* data words kept */
    uint32_t epolls;     /* epoll descriptors read */
    uint64_t dropped;    /* registrations beyond PL_KERNEL_MAX_WORDS */
    uintptr_t w[PL_KERNEL_MAX_WORDS];
};

/* Reads every epoll registration's data word of the calling process into
 * k (zeroed first). Never fails: what cannot be read is not there. */
void pl_kernel_words_read(struct pl_kernel_words *k);

/* Parses one fdinfo text of an epoll descriptor, appending data words to
 * k. Exposed for the unit test. */
void pl_kernel_words_parse(struct pl_kernel_words *k, const char *text, uint64_t len);

#endif /* HI_PAYLOAD_CENSUS_KERNEL_H */
