/* log.c - progress lines and error messages of the injector. */
#include "injector/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

void inj_log(bool verbose, const char *fmt, ...)
{
    static long long t0;
    struct timespec ts;
    long long now;
    va_list ap;

    if (!verbose)
        return;
    /* Milliseconds since the first progress line, to 0.1 ms: where the
     * time goes (an attach takes about 10 ms in all). */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    now = (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
    if (!t0)
        t0 = now;
    va_start(ap, fmt);
    fprintf(stderr, "inject: [%6.1f ms] ", (double)(now - t0) / 1000.0);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int inj_err(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (!err || !errlen)
        return code;
    n = snprintf(err, errlen, "inject: ");
    if (n < 0 || (size_t)n >= errlen)
        return code;
    va_start(ap, fmt);
    vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

long long inj_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

uint64_t inj_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void inj_sleep_us(long usec)
{
    struct timespec ts = { usec / 1000000, (usec % 1000000) * 1000 };

    while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
        ;
}
