/* record.h - the face of payload/record/, what a sample becomes: what
 * interpose/, census/ and serve/ may include of it (they include this
 * header, never one of record/'s own; check_payload_layers.py). A header
 * of record/ that a stage above needs is added here. */
#ifndef HI_PAYLOAD_RECORD_RECORD_H
#define HI_PAYLOAD_RECORD_RECORD_H

#include "payload/record/addrmap.h"  /* live sampled blocks */
#include "payload/record/bucket.h"   /* the stack table */
#include "payload/record/cfi.h"      /* frame steps compiled from .eh_frame */
#include "payload/record/cfi_hints.h" /* a followed child's rule misses, cached in its parent */
#include "payload/record/maptrack.h" /* live sampled mappings */
#include "payload/record/sample.h"   /* Poisson sampling by bytes */
#include "payload/record/session.h"  /* the key, rate and start lock the hooks read */
#include "payload/record/stack.h"    /* the walk */
#include "payload/record/stack_span.h" /* a thread's stack, and which thread, from memory */
#include "payload/record/thread.h"   /* TLS, per-thread slots, the reentrancy guard */

#endif /* HI_PAYLOAD_RECORD_RECORD_H */
