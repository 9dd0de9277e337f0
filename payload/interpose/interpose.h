/* interpose.h - the face of payload/interpose/, how calls reach us: what
 * census/ and serve/ may include of it (they include this header, never
 * one of interpose/'s own; check_payload_layers.py). GOT writing (got.h)
 * and the allocator families (family.h) stay inside: the stages above
 * patch and restore through modules.h. */
#ifndef HI_PAYLOAD_INTERPOSE_INTERPOSE_H
#define HI_PAYLOAD_INTERPOSE_INTERPOSE_H

#include "payload/interpose/after_sample.h" /* work left to the sampled path */
#include "payload/interpose/allocstats.h"  /* the allocator's own figures, trim */
#include "payload/interpose/hooks_floor.h" /* forward-only hooks (the bench's floor) */
#include "payload/interpose/hooks_mmap.h"  /* the mmap family's exact counters */
#include "payload/interpose/modules.h"     /* GOT slots of every module: patch, restore */
#include "payload/interpose/pymalloc.h"    /* CPython's allocator sampled (issue 29) */

#endif /* HI_PAYLOAD_INTERPOSE_INTERPOSE_H */
