/* log.h - progress lines and error messages of the injector. */
#ifndef HI_INJECTOR_LOG_H
#define HI_INJECTOR_LOG_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

/* Prints "inject: MESSAGE" on stderr when verbose is set (the -v progress). */
void inj_log(bool verbose, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Formats "inject: MESSAGE" into err (which may be NULL) and returns code, so
 * a failure path reads `return inj_err(err, len, INJ_EPERM, "...")`. */
int inj_err(char *err, size_t errlen, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Milliseconds on CLOCK_MONOTONIC, for deadlines. */
long long inj_now_ms(void);

/* Nanoseconds on CLOCK_MONOTONIC, for the attach's phase times (the same
 * clock as the agent's attach_ns and Python's time.monotonic()). */
uint64_t inj_now_ns(void);

/* Sleeps for usec microseconds (restarting on EINTR). */
void inj_sleep_us(long usec);

#endif /* HI_INJECTOR_LOG_H */
