/* rel_seccomp_late.c - a program that sandboxes itself after start-up,
 * while heapinject may be attached (issue 25, item 1).
 *
 * stdin commands:
 *   filter CALLS   installs, for every thread (SECCOMP_FILTER_FLAG_TSYNC),
 *                  a filter that answers SECCOMP_RET_KILL_PROCESS to each
 *                  of CALLS (comma-separated: openat, mprotect, madvise)
 *                  and allows everything else; prints "filtered N" (N: the
 *                  filters in place now) or "filter-failed ERR"
 *   status         prints "status rounds=N errors=E"
 *   quit           prints "done rounds=N errors=E" and exits 0 when E is 0
 *
 * Prints "ready" first. Between commands it allocates small blocks (main
 * arena, below the mmap threshold: brk only, never one of the calls it may
 * forbid), fills each with a pattern of its own and checks it before
 * freeing. It never makes a forbidden call itself.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLOTS 256

static unsigned long rounds, errors;
static unsigned char *blocks[SLOTS];
static size_t sizes[SLOTS];

static int call_nr(const char *name)
{
    if (!strcmp(name, "openat"))
        return __NR_openat;
    if (!strcmp(name, "mprotect"))
        return __NR_mprotect;
    if (!strcmp(name, "madvise"))
        return __NR_madvise;
    return -1;
}

static int filters_now(void)
{
    /* Read before the filter goes in would be wrong after: the count is
     * computed, not read (openat may be forbidden by now). */
    static int n;
    return ++n;
}

static int install(char *list)
{
    struct sock_filter prog[64];
    unsigned n = 0;
    int nrs[8], k = 0;
    for (char *tok = strtok(list, ","); tok && k < 8; tok = strtok(NULL, ",")) {
        if ((nrs[k] = call_nr(tok)) < 0)
            return -EINVAL;
        k++;
    }
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (int i = 0; i < k; i++) {
        prog[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
        prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
    }
    prog[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fp = { (unsigned short)n, prog };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -errno;
    long r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fp);
    if (r < 0)
        return -errno;
    if (r > 0)
        return -EAGAIN; /* a thread could not be synchronized (its tid) */
    return filters_now();
}

static void churn(void)
{
    for (int i = 0; i < 64; i++) {
        unsigned s = (unsigned)(rand() % SLOTS);
        if (blocks[s]) {
            for (size_t j = 0; j < sizes[s]; j++)
                if (blocks[s][j] != (unsigned char)(s + j))
                    errors++;
            free(blocks[s]);
        }
        sizes[s] = 16 + (size_t)(rand() % 2000);
        blocks[s] = malloc(sizes[s]);
        if (!blocks[s]) {
            errors++;
            continue;
        }
        for (size_t j = 0; j < sizes[s]; j++)
            blocks[s][j] = (unsigned char)(s + j);
    }
    rounds++;
}

int main(void)
{
    char line[256];
    size_t have = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("ready\n");
    for (;;) {
        churn();
        struct pollfd p = { 0, POLLIN, 0 };
        if (poll(&p, 1, 2) <= 0)
            continue;
        ssize_t r = read(0, line + have, sizeof(line) - 1 - have);
        if (r <= 0)
            break;
        have += (size_t)r;
        line[have] = '\0';
        char *nl;
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            if (!strncmp(line, "filter ", 7)) {
                int f = install(line + 7);
                if (f < 0)
                    printf("filter-failed %s\n", strerror(-f));
                else
                    printf("filtered %d\n", f);
            } else if (!strcmp(line, "status")) {
                printf("status rounds=%lu errors=%lu\n", rounds, errors);
            } else if (!strcmp(line, "quit")) {
                printf("done rounds=%lu errors=%lu\n", rounds, errors);
                return errors ? 1 : 0;
            }
            have -= (size_t)(nl + 1 - line);
            memmove(line, nl + 1, have + 1);
        }
    }
    printf("done rounds=%lu errors=%lu\n", rounds, errors);
    return errors ? 1 : 0;
}
