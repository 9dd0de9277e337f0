/* rel_seccomp.c - a target under a seccomp filter, for the reliability
 * tests of injection into sandboxed processes.
 *
 *   rel_seccomp trap-openat | trap-mmap    the syscall raises SIGSYS
 *   rel_seccomp errno-openat | errno-mmap  the syscall fails with EPERM
 *   rel_seccomp allow                      a filter that forbids only
 *                                          acct(2): everything we need works
 *   rel_seccomp deny-munmap                munmap fails with EPERM (the
 *                                          injector's rescue page must not
 *                                          count on unmapping itself)
 *
 * After the filter is in place it prints "ready" and allocates small blocks
 * (below the mmap threshold: brk only) in a loop, checking their contents,
 * until "quit" on stdin; then prints "done rounds=N errors=E" and exits 0
 * when E is 0. It never makes the forbidden call itself.
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    unsigned nr, action;

    if (!strcmp(mode, "trap-openat")) {
        nr = __NR_openat, action = SECCOMP_RET_TRAP;
    } else if (!strcmp(mode, "trap-mmap")) {
        nr = __NR_mmap, action = SECCOMP_RET_TRAP;
    } else if (!strcmp(mode, "errno-openat")) {
        nr = __NR_openat, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "errno-mmap")) {
        nr = __NR_mmap, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "deny-munmap")) {
        nr = __NR_munmap, action = SECCOMP_RET_ERRNO | EPERM;
    } else if (!strcmp(mode, "allow")) {
        nr = __NR_acct, action = SECCOMP_RET_ERRNO | EPERM;
    } else {
        fprintf(stderr, "usage: rel_seccomp trap-openat|trap-mmap|errno-openat|errno-mmap|deny-munmap|allow\n");
        return 2;
    }
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, action),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

    /* stdio buffers now: no mmap after the filter */
    setvbuf(stdout, NULL, _IOLBF, 0);
    printf("mode %s\n", mode);
    char line[64];
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
        perror("seccomp");
        return 2;
    }
    printf("ready\n");

    unsigned long rounds = 0, errors = 0;
    void *p[64] = { 0 };
    size_t sz[64] = { 0 };
    unsigned seed = 1;
    for (;;) {
        struct pollfd pfd = { 0, POLLIN, 0 };
        if (poll(&pfd, 1, 1) > 0) {
            if (!fgets(line, sizeof(line), stdin) || !strncmp(line, "quit", 4))
                break;
            if (!strncmp(line, "status", 6))
                printf("status rounds=%lu errors=%lu\n", rounds, errors);
        }
        for (int k = 0; k < 100; k++) {
            seed = seed * 1103515245u + 12345u;
            int i = (int)(seed >> 16) % 64;
            if (p[i]) {
                for (size_t j = 0; j < sz[i]; j++)
                    if (((unsigned char *)p[i])[j] != (unsigned char)(i + j))
                        errors++;
                free(p[i]);
            }
            sz[i] = (seed >> 8) % 2000 + 1;
            p[i] = malloc(sz[i]);
            if (!p[i]) {
                errors++;
                continue;
            }
            for (size_t j = 0; j < sz[i]; j++)
                ((unsigned char *)p[i])[j] = (unsigned char)(i + j);
        }
        rounds++;
    }
    printf("done rounds=%lu errors=%lu\n", rounds, errors);
    return errors ? 1 : 0;
}
