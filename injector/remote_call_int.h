/* remote_call_int.h - what remote_call.c (calls and their stops) and
 * remote_rescue.c (rescue mode) share. Not for other modules: they use
 * remote_call.h. */
#ifndef HI_INJECTOR_REMOTE_CALL_INT_H
#define HI_INJECTOR_REMOTE_CALL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "injector/remote_call.h"

/* Bound on the strings placed on the thread's stack. */
#define SCRATCH_MAX (64 * 1024)

/* Poll interval for "still waiting" progress lines during a long call. */
#define CALL_PROGRESS_MS 5000

/* Rescue page: the return stub, then strings (SCRATCH_MAX of them). */
#define RESCUE_STUB_ROOM 64

/* How a call in rescue mode comes back. */
enum rescue_ret {
    RET_RESTORER,   /* straight into the trampoline: no return value */
    RET_STUB,       /* through the return stub on our page (the trampoline
                       while there is no page) */
    RET_MAPPED,     /* our mmap of the page: once it has mapped, the thread
                       is parked at munmap(page) (INJ_AT_UNMAP) */
};

/* ---- the stops of a call, in either mode (remote_call.c) ---- */

/* Resumes the held thread the way its mode waits (to the next signal; in
 * rescue mode also to the next system call). 0 or -errno. */
int inj_call_resume(struct inj_call *c);
/* The next stop of the thread, its progress logged while it takes long. */
int inj_call_wait_stop(struct inj_call *c, const char *what, int *waited);
/* A stop that is not the end of the call: true when the call is over
 * (a fault) with its result in *result; false when the thread was resumed
 * (*r: the resume's result). */
bool inj_call_other_stop(struct inj_call *c, const char *what, int *r, int *result, char *err, size_t errlen);
/* The result of a call that could not be set up (r: -errno). */
int inj_call_setup_failed(struct inj_call *c, int r, const char *what, char *err, size_t errlen);
/* The result of a wait loop that failed with r (-errno). */
int inj_call_wait_failed(struct inj_call *c, int r, const char *what, char *err, size_t errlen);
/* "pid N exited during the call to what()" (INJ_EEXITED). */
int inj_call_exited(struct inj_call *c, char *err, size_t errlen, const char *what);

/* ---- rescue mode (remote_rescue.c) ---- */

int inj_rescue_run(struct inj_call *c, const char *what, uint64_t fn, const uint64_t *args, int nargs,
                   enum rescue_ret how, uint64_t *ret, char *err, size_t errlen);
/* Whether exactly [start, start + len) is one mapping of tid. */
bool inj_rescue_mapped_exactly(pid_t tid, uint64_t start, uint64_t len);

#endif /* HI_INJECTOR_REMOTE_CALL_INT_H */
