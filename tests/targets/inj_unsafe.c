/* inj_unsafe.c - a target whose only thread sits where dlopen must not be
 * called, for tests/e2e/inject_safepoint.sh.
 *
 *   inj_unsafe realloc SECS   for SECS seconds reallocs a 16 MiB block that
 *                             cannot grow in place, over and over: almost
 *                             all the time inside realloc, copying while it
 *                             holds the arena's lock (a dlopen there
 *                             deadlocks on that lock); prints "ready" at the
 *                             start, then "calm" and sleeps
 *   inj_unsafe ctor LIB       dlopen(LIB), whose constructor blocks (inside
 *                             the dynamic linker, holding the loader's lock)
 *                             until the test lets it go; prints "loaded"
 *                             after dlopen returns, then sleeps
 * The main thread is the only thread. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void *volatile sink;

static void sleep_forever(void)
{
    for (;;) {
        struct timespec ts = { 1, 0 };
        nanosleep(&ts, NULL);
    }
}

/* A child process that, after SECS seconds, fills the missing pages of
 * [lo, lo+len) through the userfaultfd: until then the parent's fault on
 * them waits in the kernel. The child dies with the parent. */
static void start_releaser(int uffd, char *lo, size_t len, double secs)
{
    pid_t parent = getpid();

    if (fork() != 0)
        return;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(0);
    struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
    nanosleep(&ts, NULL);
    struct uffdio_zeropage zp = { .range = { (unsigned long)lo, len } };
    if (ioctl(uffd, UFFDIO_ZEROPAGE, &zp) < 0)
        perror("UFFDIO_ZEROPAGE");
    _exit(0);
}

/* The thread calls realloc on a 16 MiB block that cannot grow in place:
 * realloc takes the arena's lock, allocates the new block and copies,
 * and the copy faults on pages of the old block that are missing and
 * registered with a userfaultfd: it waits in the kernel, inside libc's
 * realloc with the arena's lock held (a dlopen there deadlocks on that
 * lock), until the releaser fills them after SECS seconds. A ptrace stop
 * finds it at the copy's faulting instruction every time: the state this
 * test needs holds for the whole wait, not most of it. */
__attribute__((noinline)) static void realloc_blocked(double secs)
{
    /* Blocks below the mmap threshold stay in the heap. */
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    char *p = malloc(16 << 20);
    void *guard = malloc(32); /* right after p: p cannot grow in place */
    if (!p || !guard)
        abort();
    memset(p, 1, 16 << 20);
    long pg = sysconf(_SC_PAGESIZE);
    char *lo = (char *)(((unsigned long)p + (4 << 20)) & ~(unsigned long)(pg - 1));
    size_t len = 4 << 20;
    int uffd = syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    struct uffdio_api api = { .api = UFFD_API };
    struct uffdio_register reg = { .range = { (unsigned long)lo, len },
                                   .mode = UFFDIO_REGISTER_MODE_MISSING };
    if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) < 0 || ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
        printf("userfaultfd unavailable: %s\n", strerror(errno));
        exit(77);
    }
    if (madvise(lo, len, MADV_DONTNEED) < 0)
        abort();
    start_releaser(uffd, lo, len, secs);
    printf("ready\n");
    fflush(stdout);
    p = realloc(p, 24 << 20); /* waits in the copy until released */
    sink = p;
    free(guard);
    printf("calm after realloc\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc > 2 && !strcmp(argv[1], "realloc")) {
        realloc_blocked(atof(argv[2]));
        sleep_forever();
    }
    if (argc > 2 && !strcmp(argv[1], "ctor")) {
        if (!dlopen(argv[2], RTLD_NOW)) {
            printf("dlopen: %s\n", dlerror());
            return 1;
        }
        printf("loaded\n");
        sleep_forever();
    }
    fprintf(stderr, "usage: inj_unsafe realloc SECS | ctor LIB\n");
    return 2;
}
