/* hooks.h - what the malloc hooks (hooks.c) share with interpose/'s other
 * samplers (pymalloc.c). interpose/'s own header: not part of its face. */
#ifndef HI_PAYLOAD_INTERPOSE_HOOKS_H
#define HI_PAYLOAD_INTERPOSE_HOOKS_H

#include "payload/record/record.h"

/* A failed realloc: its old block is still live, its entry (taken out of
 * the address map before the call) goes back; errno is kept. */
void pl_restore_sampled(struct pl_tls *t, const struct pl_live *e);

#endif /* HI_PAYLOAD_INTERPOSE_HOOKS_H */
