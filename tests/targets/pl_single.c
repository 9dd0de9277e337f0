/* pl_single.c - a single-threaded program that forks: what glibc believes
 * of its threads, and what its forks cost, before an attach, during the
 * session and after the detach (issue 25, item 6). Commands (pl_common.h):
 *   forks N   N times fork(): the child mallocs, fills, checks and frees
 *             8 blocks (32 B - 4 KiB) and ends with _exit (1 if a block
 *             read back wrong); the parent reaps it. Then the flags and
 *             the figures: "forks N single=P own=O tcb=T threads=K
 *             child_flt10=C parent_flt10=F cpu_us=U bad=B data=ok|BAD",
 *             P: __libc_single_threaded as this program sees it, O:
 *             libc's own byte (the same variable through libc's handle:
 *             a copy-relocated program has two), T: the TCB's
 *             multiple_threads (%fs:24), K: Threads in /proc/self/status,
 *             C and F: minor faults per fork x10 of the children (their
 *             rusage) and of this process, U: CPU per fork (both), B:
 *             children that failed; data: this process's own blocks,
 *             filled at start, read back after the forks.
 *   spawn     a thread of the program's own, which waits on a pipe and
 *             mallocs and frees a block -> "spawned"
 *   join      it is let go and joined -> "joined R" (R: its result, 1
 *             if its block read back right)
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pl_common.h"

#define KEPT 64
static unsigned char *kept[KEPT];

static size_t kept_size(int i)
{
    return 24 + (size_t)i * 40;
}

static void fill_kept(void)
{
    for (int i = 0; i < KEPT; i++) {
        kept[i] = malloc(kept_size(i));
        memset(kept[i], 0x40 + i, kept_size(i));
    }
}

static int kept_ok(void)
{
    for (int i = 0; i < KEPT; i++)
        for (size_t k = 0; k < kept_size(i); k++)
            if (kept[i][k] != (unsigned char)(0x40 + i))
                return 0;
    return 1;
}

static int child_work(void)
{
    unsigned char *b[8];
    for (int k = 0; k < 8; k++) {
        b[k] = malloc((size_t)32 << k);
        if (!b[k])
            return 1;
        memset(b[k], k + 1, (size_t)32 << k);
    }
    for (int k = 0; k < 8; k++) {
        for (size_t i = 0; i < ((size_t)32 << k); i++)
            if (b[k][i] != k + 1)
                return 1;
        free(b[k]);
    }
    return 0;
}

static int tcb_multiple_threads(void)
{
#if defined(__x86_64__)
    int v;
    __asm__ volatile("movl %%fs:24, %0" : "=r"(v));
    return v;
#else
    return -1;
#endif
}

static int libc_own_flag(void)
{
    void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    const char *own = libc ? dlsym(libc, "__libc_single_threaded") : NULL;
    int v = own ? *own : -1;
    if (libc)
        dlclose(libc);
    return v;
}

static int threads_now(void)
{
    char buf[4096];
    int fd = open("/proc/self/status", O_RDONLY), n = -1;
    ssize_t len = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
    if (fd >= 0)
        close(fd);
    if (len > 0) {
        buf[len] = '\0';
        const char *t = strstr(buf, "\nThreads:");
        if (t)
            n = atoi(t + 9);
    }
    return n;
}

static long usec(struct timeval tv)
{
    return tv.tv_sec * 1000000L + tv.tv_usec;
}

static void forks(int n)
{
    struct rusage c0, c1, s0, s1;
    int bad = 0;
    getrusage(RUSAGE_CHILDREN, &c0);
    getrusage(RUSAGE_SELF, &s0);
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p == 0)
            _exit(child_work());
        int st = 0;
        if (p < 0 || waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            bad++;
    }
    getrusage(RUSAGE_CHILDREN, &c1);
    getrusage(RUSAGE_SELF, &s1);
    long cflt = c1.ru_minflt - c0.ru_minflt, pflt = s1.ru_minflt - s0.ru_minflt;
    long cpu = usec(c1.ru_utime) - usec(c0.ru_utime) + usec(c1.ru_stime) - usec(c0.ru_stime) + usec(s1.ru_utime) -
               usec(s0.ru_utime) + usec(s1.ru_stime) - usec(s0.ru_stime);
    pl_say("forks %d single=%d own=%d tcb=%d threads=%d child_flt10=%ld parent_flt10=%ld cpu_us=%ld bad=%d data=%s", n,
           __libc_single_threaded, libc_own_flag(), tcb_multiple_threads(), threads_now(), cflt * 10 / n, pflt * 10 / n,
           cpu / n, bad, kept_ok() ? "ok" : "BAD");
}

static int own_pipe[2];
static pthread_t own_thread;

static void *own_main(void *arg)
{
    char c;
    (void)arg;
    if (read(own_pipe[0], &c, 1) != 1)
        return NULL;
    unsigned char *b = malloc(4096);
    memset(b, 0x5a, 4096);
    int ok = b[0] == 0x5a && b[4095] == 0x5a;
    free(b);
    return ok ? (void *)1 : NULL;
}

static int handle(const char *cmd, const char *arg)
{
    if (strcmp(cmd, "spawn") == 0) {
        if (pipe(own_pipe) != 0 || pthread_create(&own_thread, NULL, own_main, NULL) != 0)
            pl_say("spawn failed");
        else
            pl_say("spawned");
        return 0;
    }
    if (strcmp(cmd, "join") == 0) {
        void *r = NULL;
        if (write(own_pipe[1], "x", 1) != 1 || pthread_join(own_thread, &r) != 0)
            r = NULL;
        close(own_pipe[0]);
        close(own_pipe[1]);
        pl_say("joined %d", r != NULL);
        return 0;
    }
    if (strcmp(cmd, "forks") == 0) {
        int n = atoi(arg);
        forks(n > 0 ? n : 1);
        return 0;
    }
    return 1;
}

int main(void)
{
    fill_kept();
    return pl_serve(handle);
}
