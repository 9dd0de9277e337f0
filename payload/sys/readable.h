/* readable.h - whether memory can be read, asked of the kernel without a
 * descriptor, errno or signal (for the stack walk and the GOT's checks). */
#ifndef HI_PAYLOAD_READABLE_H
#define HI_PAYLOAD_READABLE_H

#include <errno.h>
#include <stdint.h>
#include <sys/syscall.h>

/* Whether the 8 bytes at addr can be read now, with no descriptor and no
 * errno: rt_sigprocmask copies the new mask from addr before it looks at
 * `how`, so with a `how` that is none of SIG_BLOCK, SIG_UNBLOCK and
 * SIG_SETMASK an unreadable address fails with EFAULT, a readable one
 * with EINVAL, and nothing changes (kernel/signal.c). A call every
 * seccomp allow-list has (libc makes it all the time). For the stack
 * walk's reads off the stack, and a fork child's check of its slots. */
#define PL_NO_SUCH_HOW 0x7fffL
static inline int pl_mem_readable(uintptr_t addr)
{
    long r;
    register long r10 __asm__("r10") = 8; /* sizeof the kernel's sigset_t */
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "0"((long)SYS_rt_sigprocmask), "D"(PL_NO_SUCH_HOW), "S"(addr), "d"(0L), "r"(r10)
                     : "rcx", "r11", "memory");
    return r == -EINVAL;
}

#endif /* HI_PAYLOAD_READABLE_H */
