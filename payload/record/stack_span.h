/* stack_span.h - a thread's stack span found without a system call, for
 * its first stack walk (issue 25). */
#ifndef HI_PAYLOAD_STACK_SPAN_H
#define HI_PAYLOAD_STACK_SPAN_H

#include <stdint.h>

/* At start (system calls allowed): the main thread's stack mapping. */
void pl_stack_span_init(void);

/* On the agent thread, once: where glibc's struct pthread keeps the
 * thread's stack block (memory reads only). */
void pl_stack_span_learn(void);

/* Whether `at` (the calling thread's current frame) lies in its own
 * stack as glibc made it, or in the main thread's stack mapping; then
 * [*lo, *hi) is that stack, every byte of it readable while the thread
 * runs. No system call. */
int pl_stack_span_here(uintptr_t at, uintptr_t *lo, uintptr_t *hi);

/* 1 when the calling thread is the process's initial thread (glibc
 * gives it no stack block), 0 when another, -1 unknown (the offset not
 * found). No system call. */
int pl_stack_span_initial_thread(void);

#endif /* HI_PAYLOAD_STACK_SPAN_H */
