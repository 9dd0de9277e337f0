/* pid.h - this process's id from the kernel itself. */
#ifndef HI_PAYLOAD_SYS_PID_H
#define HI_PAYLOAD_SYS_PID_H

#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* getpid(2) made directly. Asked where the answer tells a fork child from
 * its parent (fork handlers, the exit path, the crash handler): a child of
 * clone() or _Fork() runs no atfork handler, so no remembered value of
 * ours can be trusted there, only the kernel's. */
static inline pid_t pl_raw_getpid(void)
{
    return (pid_t)syscall(SYS_getpid);
}

#endif /* HI_PAYLOAD_SYS_PID_H */
