/* after_sample.h - work a stage above leaves to the sampled path of the
 * allocation hooks (hooks.c's pl_sample_take), never to the fast path. */
#ifndef HI_PAYLOAD_INTERPOSE_AFTER_SAMPLE_H
#define HI_PAYLOAD_INTERPOSE_AFTER_SAMPLE_H

/* While pl_after_sample_due is set, each sample taken calls
 * pl_after_sample on the program's thread, after its sample, inside the
 * recursion guard (what it allocates is forwarded unaccounted) and outside
 * the allocator (the real call has returned). serve/lazy_agent.c starts
 * a followed fork child's agent thread there. The function is set before
 * the word. */
extern int pl_after_sample_due __attribute__((visibility("hidden")));
extern void (*pl_after_sample)(void) __attribute__((visibility("hidden")));

#endif /* HI_PAYLOAD_INTERPOSE_AFTER_SAMPLE_H */
