/* single_again.h - glibc's single-threaded flags put back after a detach
 * of a process that was single-threaded before the attach.
 *
 * glibc sets its flags to "multiple threads" at the first pthread_create
 * and never sets them back, not even in a fork child. Our start helper and
 * agent are such threads: without this, a single-threaded program (a
 * postmaster, a pre-fork master) would fork and malloc by glibc's
 * multi-threaded paths for good after we leave (docs/DESIGN-NOTES.md,
 * "What a fork costs after an attach"). The flags go back from the
 * program's own only thread, at its first fork after the detach (our
 * atfork prepare handler), when glibc's own lists of threads show that
 * thread alone: memory reads only, no system call (a filter the program
 * installed after the detach meets none of ours). */
#ifndef HI_PAYLOAD_SINGLE_AGAIN_H
#define HI_PAYLOAD_SINGLE_AGAIN_H

/* heapinject_start, on the thread the injector holds, before any thread
 * of ours is made (start lock not needed: one caller at a time). Notes
 * whether the process is single-threaded by glibc's flags and where they
 * are; a process already multi-threaded is never touched. */
void pl_single_note_start(void);

/* The agent thread, first thing: notes where glibc's list of the threads
 * it made stacks for is (the agent is on it now), and that the agent's
 * own copy of the TCB flag says "multiple", as glibc's layout says. */
void pl_single_note_agent(void);

/* pthread_atfork prepare handler: in the thread calling fork. */
void pl_single_atfork_prepare(void);

#endif /* HI_PAYLOAD_SINGLE_AGAIN_H */
