/* sys.h - the face of payload/sys/, the system layer every stage stands on:
 * what record/, interpose/, census/ and serve/ may include of it (they
 * include this header, never one of sys/'s own; check_payload_layers.py).
 * A header of sys/ that a stage above needs is added here. */
#ifndef HI_PAYLOAD_SYS_SYS_H
#define HI_PAYLOAD_SYS_SYS_H

#include "payload/sys/arena.h"         /* our own memory: anonymous mmap */
#include "payload/sys/clock.h"         /* CLOCK_MONOTONIC in ns */
#include "payload/sys/dynelf.h"        /* a loaded module's dynamic section */
#include "payload/sys/fmt.h"           /* text without stdio */
#include "payload/sys/fork_text.h"     /* the text a fork child runs */
#include "payload/sys/lock.h"          /* the tables' spin lock */
#include "payload/sys/pid.h"           /* our pid from the kernel */
#include "payload/sys/procmaps.h"      /* our /proc files, an address's protection */
#include "payload/sys/readable.h"      /* can memory be read */
#include "payload/sys/seccomp_watch.h" /* a filter installed after attach */
#include "payload/sys/send.h"          /* the sink records leave by */

#endif /* HI_PAYLOAD_SYS_SYS_H */
