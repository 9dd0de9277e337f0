/* inject_testlib.c - the library the inject_* end-to-end tests load into
 * targets. Built by the scripts (gcc -shared -fPIC) into their temporary
 * directory; not a target program. Each function takes the STRING argument
 * of `heapinject inject` and returns an int the test can check. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static atomic_int counter;
static int constructed;

__attribute__((constructor)) static void testlib_init(void)
{
    constructed = 1;
}

/* 1, 2, 3, ... across injections into the same process (the library
 * stays loaded and dlopen returns the same handle). */
int hi_test_count(const char *arg)
{
    (void)arg;
    return atomic_fetch_add(&counter, 1) + 1;
}

/* The target's pid: proves the call ran inside the target. */
int hi_test_getpid(const char *arg)
{
    (void)arg;
    return constructed ? (int)getpid() : -1;
}

/* strlen of the argument (-1 for NULL): proves the string arrived. */
int hi_test_strlen(const char *arg)
{
    return arg ? (int)strlen(arg) : -1;
}

/* A negative return value, to check sign extension. */
int hi_test_negative(const char *arg)
{
    (void)arg;
    return -42;
}

/* Dirties SSE and x87 registers, to check that they are restored. */
int hi_test_float(const char *arg)
{
    volatile double d = arg ? (double)strlen(arg) : 3.0;
    volatile long double x = 7.0L;

    for (int i = 0; i < 1000; i++) {
        d = d * 1.5 + 0.25;
        x = x * 1.25L - 0.5L;
    }
    return (int)(d > 0) + (int)(x > 0);
}

/* Sleeps the given number of milliseconds inside the target, so that a
 * test can send a signal while the injected call runs. */
int hi_test_sleep_ms(const char *arg)
{
    long ms = arg ? atol(arg) : 100;
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    while (nanosleep(&ts, &ts) != 0)
        ;
    return (int)ms;
}

/* Ends the target from inside the injected call (exit status 5): the
 * injector must notice and report it, not hang. */
int hi_test_exit(const char *arg)
{
    (void)arg;
    _exit(5);
}
