/* pl_common.h - command loop shared by the payload's test targets (pl_*.c).
 *
 * A target prints "ready", then reads commands from stdin, one per line:
 *   attach CONFIG   dlopen the payload ($HI_PAYLOAD) and call heapinject_start
 *                   (used when the injector is not available) -> "attached RC"
 *   stop            heapinject_stop -> "stopped RC"
 *   state           heapinject_test_state text, then "end-state"
 *   quit            exit 0
 *   anything else   passed to the target's handler (e.g. "run"), which prints
 *                   its ground truth and ends with "done ..."
 * Output is flushed after every line so tests can wait for it.
 */
#ifndef PL_COMMON_H
#define PL_COMMON_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *pl_payload_handle(int load)
{
    const char *path = getenv("HI_PAYLOAD");
    if (!path)
        path = "build/libheapinject.so";
    return dlopen(path, RTLD_NOW | (load ? 0 : RTLD_NOLOAD));
}

static void pl_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void pl_say(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    fputc('\n', stdout);
    fflush(stdout);
}

/* handler(cmd, arg): returns 0 if it knew the command. */
static int pl_serve(int (*handler)(const char *cmd, const char *arg))
{
    static char line[4096];
    pl_say("ready");
    while (fgets(line, sizeof(line), stdin)) {
        line[strcspn(line, "\n")] = '\0';
        char *arg = strchr(line, ' ');
        if (arg)
            *arg++ = '\0';
        else
            arg = line + strlen(line);
        if (strcmp(line, "attach") == 0) {
            void *h = pl_payload_handle(1);
            int (*start)(const char *) = h ? (int (*)(const char *))dlsym(h, "heapinject_start") : NULL;
            if (!start) {
                pl_say("attached error %s", dlerror());
                continue;
            }
            pl_say("attached %d", start(arg));
        } else if (strcmp(line, "stop") == 0) {
            void *h = pl_payload_handle(0);
            int (*stop)(void) = h ? (int (*)(void))dlsym(h, "heapinject_stop") : NULL;
            pl_say("stopped %d", stop ? stop() : -9999);
        } else if (strcmp(line, "state") == 0) {
            void *h = pl_payload_handle(0);
            long (*st)(char *, unsigned long) = h ? (long (*)(char *, unsigned long))dlsym(h, "heapinject_test_state") : NULL;
            static char buf[1 << 18];
            if (st && st(buf, sizeof(buf)) >= 0)
                fputs(buf, stdout);
            pl_say("end-state");
        } else if (strcmp(line, "quit") == 0) {
            pl_say("bye");
            exit(0);
        } else if (!handler || handler(line, arg) != 0) {
            pl_say("unknown command %s", line);
        }
    }
    return 0;
}

#endif /* PL_COMMON_H */
