/* gdb.h - the fallback method: the same injection done by gdb. */
#ifndef HI_INJECTOR_GDB_H
#define HI_INJECTOR_GDB_H

#include "injector/inject.h"
#include "injector/libc.h"
#include "injector/maps.h"

/* Loads target_path (already the path in the target's view) with
 * `gdb -p PID -batch -nx` and a Python script: pick a thread that is not
 * inside malloc, ld.so or a signal handler (re-attaching until
 * opts->timeout_ms), map a page for the strings, dlopen(RTLD_NOW), read
 * dlerror() on failure, dlsym, call the symbol, unmap, detach. Uses the
 * addresses resolved from the target's libc (libc) rather than gdb's symbol
 * lookup. Returns INJ_OK or an enum inj_error with result->error set. */
int inj_gdb_inject(const struct inj_options *opts, const char *target_path,
                   const struct inj_maps *maps, const struct inj_libc *libc,
                   struct inj_result *result);

/* The signal a line of gdb's output says the inferior received ("Program
 * received signal SIGUSR1, ...", "Thread 2 "name" received signal SIGTERM,
 * ...", "... signal SIG35, Real-time event 35."), else 0. The cli sends
 * such signals again: gdb abandoned its call and kept them. */
int inj_gdb_received_signal(const char *line);

#endif /* HI_INJECTOR_GDB_H */
