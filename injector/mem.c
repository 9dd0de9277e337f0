/* mem.c - reading and writing the target's memory. */
#include "injector/mem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

static int proc_mem_io(pid_t pid, uint64_t addr, void *buf, size_t len, int write)
{
    char path[64];
    size_t done = 0;
    int fd, err = 0;

    snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
    fd = open(path, (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    while (done < len) {
        ssize_t r = write ? pwrite(fd, (const char *)buf + done, len - done, (off_t)(addr + done))
                          : pread(fd, (char *)buf + done, len - done, (off_t)(addr + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err = r < 0 ? -errno : -EFAULT;
            break;
        }
        done += (size_t)r;
    }
    close(fd);
    return err;
}

int inj_mem_write(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
    struct iovec local = { (void *)buf, len };
    struct iovec remote = { (void *)(uintptr_t)addr, len };

    if (process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
        return 0;
    return proc_mem_io(pid, addr, (void *)buf, len, 1);
}

int inj_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
    struct iovec local = { buf, len };
    struct iovec remote = { (void *)(uintptr_t)addr, len };

    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)len)
        return 0;
    return proc_mem_io(pid, addr, buf, len, 0);
}

int inj_mem_read_string(pid_t pid, uint64_t addr, char *buf, size_t size)
{
    size_t got = 0;

    if (!size)
        return -EINVAL;
    buf[0] = '\0';
    while (got + 1 < size) {
        /* Never cross a 4 KiB boundary in one read (4 KiB divides every
         * page size): the next page may be unmapped although the string
         * ends before it. */
        size_t room = 4096 - ((addr + got) & 4095);
        size_t want = size - 1 - got < room ? size - 1 - got : room;
        char *nul;
        int err = inj_mem_read(pid, addr + got, buf + got, want);

        if (err) {
            buf[got] = '\0';
            return got ? (int)got : err;
        }
        nul = memchr(buf + got, '\0', want);
        if (nul)
            return (int)(nul - buf);
        got += want;
    }
    buf[got] = '\0';
    return (int)got;
}
