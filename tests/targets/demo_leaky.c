/* demo_leaky - a small "service" for `make demo`: it handles requests in a
 * loop; each request allocates and frees scratch memory (normal churn), and
 * each one also keeps a session buffer that nobody ever frees: a leak of
 * about 4 MiB per second, all from leak_session_buffer().
 * Prints "ready" when running. Stops on SIGINT/SIGTERM. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop;
static void *volatile sink; /* keeps the compiler from dropping allocations */

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

/* The bug: the buffer's pointer is dropped, so it is never freed. */
static void leak_session_buffer(unsigned request)
{
    size_t n = 2048 + (request % 8) * 512;
    char *buf = malloc(n);
    if (buf)
        memset(buf, (int)(request & 0xff), n);
    sink = buf;
}

static void parse_request(unsigned request)
{
    size_t n = 256 + (request * 37) % 16384;
    char *scratch = malloc(n);
    if (scratch)
        memset(scratch, 0, n);
    sink = scratch;
    free(scratch);
}

static void handle_request(unsigned request)
{
    for (int i = 0; i < 4; i++)
        parse_request(request * 4 + (unsigned)i);
    leak_session_buffer(request);
}

int main(void)
{
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    printf("ready\n");
    fflush(stdout);
    unsigned request = 0;
    while (!stop) {
        /* ~1000 requests per second */
        for (int i = 0; i < 10; i++)
            handle_request(request++);
        struct timespec ts = { 0, 10 * 1000 * 1000 };
        nanosleep(&ts, NULL);
    }
    return 0;
}
