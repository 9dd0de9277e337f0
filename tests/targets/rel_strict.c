/* rel_strict.c - a process whose only thread runs in seccomp strict mode
 * (prctl PR_SET_SECCOMP, SECCOMP_MODE_STRICT): from then on it may only
 * read, write, exit and rt_sigreturn; any other system call kills it.
 * A sandboxed worker of this kind (the original seccomp use) must be
 * refused, not killed, by an injection.
 *
 * Prints "ready", then for each byte read on stdin writes "alive N\n"
 * (N counts the bytes); "q" ends it with exit(0) through the raw syscall
 * (glibc's exit would call exit_group, which strict mode forbids). */
#include <linux/seccomp.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void)
{
    char msg[32] = "alive ";
    unsigned n = 0;

    printf("ready\n");
    fflush(stdout);
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0) {
        perror("prctl(PR_SET_SECCOMP)");
        return 1;
    }
    for (;;) {
        char c;
        if (syscall(SYS_read, 0, &c, 1) != 1 || c == 'q')
            break;
        n++;
        /* No snprintf: it may allocate. */
        int len = 6;
        char digits[12];
        int d = 0;
        for (unsigned v = n; v || !d; v /= 10)
            digits[d++] = (char)('0' + v % 10);
        while (d)
            msg[len++] = digits[--d];
        msg[len++] = '\n';
        syscall(SYS_write, 1, msg, len);
    }
    syscall(SYS_exit, 0);
    return 0;
}
