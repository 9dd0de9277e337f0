/* pl_forkcost.c - what a process attached once pays in its forks and its
 * crashes (issue 25, items 5 and 6). Commands (pl_common.h):
 *   idiom          old = signal(SIGSEGV, h); signal(SIGSEGV, old): our
 *                  handler, if it was there, goes back without SA_SIGINFO
 *                  -> "idiom put back HANDLER"
 *   sigsegv        SIGSEGV's action as the kernel holds it -> "sigsegv
 *                  handler=H flags=F" (hex)
 *   raise          raise(SIGSEGV), the stack below poisoned first (a
 *                  handler that reads a siginfo the kernel did not write
 *                  sees a fault); should it return: "SURVIVED", exit 5
 *   forkfault K    a child made by K (_Fork, clone, sysfork: no atfork
 *                  handler runs; vfork) writes through NULL; the parent
 *                  reaps it -> "forkfault K sig=S core=C ms=MS", MS from
 *                  the fork to the child's end
 *   forkfault-nogetpid K
 *                  as forkfault K, the child first putting itself under a
 *                  seccomp filter that kills getpid (installed with the
 *                  syscall instruction: no function a profiler hooks)
 *                  -> "forkfault-nogetpid K sig=S core=C ms=MS"
 *   forkmem        fork(): the child reads its minor page faults so far
 *                  (getrusage: the fork handlers' included) and its own
 *                  Private_Dirty from /proc/self/smaps_rollup (no malloc)
 *                  and sends them up a pipe -> "forkmem private_dirty_kb=N
 *                  minflt=F"
 *   forks N        N times fork() + _exit(0) + waitpid -> "forks N ms=MS"
 *   alloc          some malloc/free, so the hooks have run
 *   hold N         N blocks of 64 bytes kept (sampled at rate 1, they fill
 *                  the payload's tables) -> "done hold"
 *   unhold         frees them (the tables' pages stay touched), trims the
 *                  heap -> "done unhold"
 *   keep           fork(): the child waits on a pipe -> "kept PID"
 *   measure        the kept child reads its own Private_Dirty, says "kept
 *                  private_dirty_kb=N" and exits; the parent reaps it
 */
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pl_common.h"

pid_t _Fork(void);

struct ksigaction {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void program_handler(int sig)
{
    (void)sig;
}

__attribute__((noreturn)) static void fault(void)
{
    *(volatile int *)(uintptr_t)0 = 1;
    _exit(9); /* not reached */
}

/* This thread under a filter that kills getpid, by the instruction. */
static void no_getpid(void)
{
    struct sock_filter prog[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_getpid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog fp = { sizeof(prog) / sizeof(prog[0]), prog };
    long r;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        _exit(7);
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)__NR_seccomp), "D"((long)SECCOMP_SET_MODE_FILTER), "S"(0L), "d"(&fp)
                     : "rcx", "r11", "memory");
    if (r != 0)
        _exit(8);
}

static int filter_child;

static int fault_child(void *arg)
{
    (void)arg;
    if (filter_child)
        no_getpid();
    fault();
}

static char clone_stack[64 * 1024] __attribute__((aligned(16)));

/* The child's Private_Dirty in kB, read with system calls only. */
static long own_private_dirty_kb(void)
{
    char buf[4096];
    int fd = open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    const char *p = strstr(buf, "Private_Dirty:");
    if (!p)
        return -1;
    p += strlen("Private_Dirty:");
    long kb = 0;
    while (*p == ' ')
        p++;
    while (*p >= '0' && *p <= '9')
        kb = kb * 10 + (*p++ - '0');
    return kb;
}

/* Fills the stack below the caller with 0x01 bytes: a signal frame put
 * there later holds them wherever the kernel writes nothing, e.g. a
 * siginfo it did not fill (si_code 0x01010101 > 0: "a fault"). */
__attribute__((noinline)) static void poison_stack(void)
{
    volatile char pad[64 * 1024];
    for (size_t i = 0; i < sizeof(pad); i++)
        pad[i] = 1;
}

static int keep_pipe[2] = { -1, -1 };
static pid_t kept;
static void **held;
static int held_n;

static int handle(const char *cmd, const char *arg)
{
    if (strcmp(cmd, "hold") == 0) {
        held_n = atoi(arg);
        held = malloc(sizeof(void *) * (size_t)held_n);
        for (int i = 0; held && i < held_n; i++)
            held[i] = malloc(64);
        pl_say("done hold");
    } else if (strcmp(cmd, "unhold") == 0) {
        for (int i = held_n; held && i-- > 0;)
            free(held[i]);
        free(held);
        held = NULL;
        malloc_trim(0);
        pl_say("done unhold");
    } else if (strcmp(cmd, "keep") == 0) {
        if (pipe(keep_pipe) != 0)
            return pl_say("keep failed"), 0;
        fflush(stdout);
        kept = fork();
        if (kept == 0) {
            char c;
            close(keep_pipe[1]);
            if (read(keep_pipe[0], &c, 1) != 1)
                _exit(1);
            pl_say("kept private_dirty_kb=%ld", own_private_dirty_kb());
            _exit(0);
        }
        close(keep_pipe[0]);
        pl_say("kept %d", (int)kept);
    } else if (strcmp(cmd, "measure") == 0) {
        if (write(keep_pipe[1], "m", 1) != 1)
            return pl_say("measure failed"), 0;
        close(keep_pipe[1]);
        waitpid(kept, NULL, 0);
    } else if (strcmp(cmd, "idiom") == 0) {
        void (*old)(int) = signal(SIGSEGV, program_handler);
        signal(SIGSEGV, old);
        pl_say("idiom put back %p", (void *)old);
    } else if (strcmp(cmd, "sigsegv") == 0) {
        struct ksigaction ka;
        if (syscall(SYS_rt_sigaction, SIGSEGV, NULL, &ka, 8) != 0)
            pl_say("sigsegv error");
        else
            pl_say("sigsegv handler=%p flags=%#lx", ka.handler, ka.flags);
    } else if (strcmp(cmd, "raise") == 0) {
        poison_stack();
        raise(SIGSEGV);
        pl_say("SURVIVED");
        exit(5);
    } else if (strcmp(cmd, "forkfault") == 0 || strcmp(cmd, "forkfault-nogetpid") == 0) {
        filter_child = strcmp(cmd, "forkfault") != 0;
        fflush(stdout);
        double t0 = now_ms();
        pid_t c;
        if (strcmp(arg, "_Fork") == 0)
            c = _Fork();
        else if (strcmp(arg, "sysfork") == 0)
            c = (pid_t)syscall(SYS_fork);
        else if (strcmp(arg, "vfork") == 0)
            c = vfork();
        else if (strcmp(arg, "clone") == 0)
            c = clone(fault_child, clone_stack + sizeof(clone_stack), SIGCHLD, NULL);
        else {
            pl_say("forkfault: unknown kind %s", arg);
            return 0;
        }
        if (c == 0)
            fault_child(NULL);
        int st = 0;
        if (c < 0 || waitpid(c, &st, 0) != c) {
            pl_say("forkfault %s failed", arg);
            return 0;
        }
        pl_say("%s %s sig=%d core=%d ms=%.0f", cmd, arg, WIFSIGNALED(st) ? WTERMSIG(st) : 0,
               WIFSIGNALED(st) ? WCOREDUMP(st) != 0 : 0, now_ms() - t0);
    } else if (strcmp(cmd, "forkmem") == 0) {
        int p[2];
        if (pipe(p) != 0)
            return pl_say("forkmem failed"), 0;
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            long v[2] = { own_private_dirty_kb(), ru.ru_minflt };
            if (write(p[1], v, sizeof(v)) != sizeof(v))
                _exit(1);
            _exit(0);
        }
        long v[2] = { -1, -1 };
        close(p[1]);
        if (c < 0 || read(p[0], v, sizeof(v)) != sizeof(v))
            v[0] = v[1] = -1;
        close(p[0]);
        if (c > 0)
            waitpid(c, NULL, 0);
        pl_say("forkmem private_dirty_kb=%ld minflt=%ld", v[0], v[1]);
    } else if (strcmp(cmd, "forks") == 0) {
        int n = atoi(arg);
        fflush(stdout);
        double t0 = now_ms();
        for (int i = 0; i < n; i++) {
            pid_t c = fork();
            if (c == 0)
                _exit(0);
            if (c > 0)
                waitpid(c, NULL, 0);
        }
        pl_say("forks %d ms=%.0f", n, now_ms() - t0);
    } else if (strcmp(cmd, "alloc") == 0) {
        for (int i = 0; i < 1000; i++)
            free(malloc((size_t)(16 + i)));
        pl_say("done alloc");
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
