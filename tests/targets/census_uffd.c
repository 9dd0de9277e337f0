/* census_uffd.c - a target with a userfaultfd over a region of its own,
 * for tests/e2e/census_copy.sh. With UFFD_FEATURE_EVENT_FORK (no
 * argument) every fork of the process sends its monitor a fork event and
 * a new userfaultfd, and the fork waits until the monitor reads it: a
 * census must be refused. "nofork": the same without the feature, where a
 * census must be taken.
 *
 * A monitor thread reads the events and counts fork events. Prints
 * "ready" once set up; "status" on stdin prints "status forks=N fds=M
 * data=ok|BAD" (fds: its open descriptors now). Exits 77 with a reason
 * when userfaultfd is refused here. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

static int uffd;
static atomic_ulong forks;
static unsigned *table;

static void *monitor(void *arg)
{
    (void)arg;
    for (;;) {
        struct pollfd p = { uffd, POLLIN, 0 };
        if (poll(&p, 1, -1) <= 0)
            continue;
        struct uffd_msg m;
        if (read(uffd, &m, sizeof(m)) != sizeof(m))
            continue;
        if (m.event == UFFD_EVENT_FORK)
            atomic_fetch_add(&forks, 1);
    }
    return NULL;
}

static int count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n - 1; /* the directory's own */
}

int main(int argc, char **argv)
{
    int want_fork = !(argc > 1 && !strcmp(argv[1], "nofork"));
    setvbuf(stdout, NULL, _IOLBF, 0);
    table = malloc(4096 * sizeof(*table));
    for (unsigned i = 0; i < 4096; i++)
        table[i] = i * 2654435761u;
    uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
    if (uffd < 0) {
        printf("userfaultfd unavailable: %s\n", strerror(errno));
        return 77;
    }
    struct uffdio_api api = { .api = UFFD_API, .features = want_fork ? UFFD_FEATURE_EVENT_FORK : 0 };
    if (ioctl(uffd, UFFDIO_API, &api) < 0) {
        printf("UFFDIO_API refused: %s\n", strerror(errno));
        return 77;
    }
    size_t len = 1 << 20;
    char *region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct uffdio_register reg = { .range = { (unsigned long)region, len }, .mode = UFFDIO_REGISTER_MODE_MISSING };
    if (region == MAP_FAILED || ioctl(uffd, UFFDIO_REGISTER, &reg) < 0) {
        printf("UFFDIO_REGISTER refused: %s\n", strerror(errno));
        return 77;
    }
    pthread_t th;
    pthread_create(&th, NULL, monitor, NULL);
    printf("ready uffd=%d\n", uffd);
    char line[64];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "status", 6)) {
            int ok = 1;
            for (unsigned i = 0; i < 4096; i++)
                ok &= table[i] == i * 2654435761u;
            printf("status forks=%lu fds=%d data=%s\n", atomic_load(&forks), count_fds(), ok ? "ok" : "BAD");
        }
    return 0;
}
