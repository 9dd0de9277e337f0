/* fork_text.h - where the code a fork child runs is placed.
 *
 * A child's page tables hold no entry for a file-backed page it has not
 * touched yet (the kernel copies only the anonymous ones at fork), so each
 * page of our text the child's atfork handlers run costs it a page fault,
 * in every child, after a detach too (issue 25: 8 faults a fork more than
 * before the attach, with the handlers spread over a dozen files' text).
 * Placed in one section of their own, grouped by the linker with every
 * other .text.unlikely.* input, they share one or two pages; so does the
 * first test of our exit handler, which every exit() runs for good. */
#ifndef HI_PAYLOAD_SYS_FORK_TEXT_H
#define HI_PAYLOAD_SYS_FORK_TEXT_H

#define PL_FORK_TEXT __attribute__((section(".text.unlikely.pl_fork"), noinline))

#endif /* HI_PAYLOAD_SYS_FORK_TEXT_H */
