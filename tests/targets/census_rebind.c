/* census_rebind.c - a server that closes its listening socket and binds
 * the same port again every 2 ms, for tests/e2e/census_copy.sh: a
 * census's copy must not hold the program's descriptors (a copy of the
 * listener keeps the port bound: the re-bind fails with EADDRINUSE).
 *
 *   census_rebind [NFILES]   also holds NFILES descriptors open (the more
 *                            it has, the longer a fork's copy of them took
 *                            to close)
 * Holds a table it checks. Prints "ready port=P"; "status" on stdin prints
 * "status eaddrinuse=N rebinds=M data=ok|BAD". */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

static atomic_ulong eaddrinuse, rebinds;
static struct sockaddr_in addr;
static unsigned long *table;

static int listener(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 || listen(fd, 16) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

static void *rebind(void *arg)
{
    int fd = *(int *)arg;
    for (;;) {
        struct timespec ts = { 0, 2000000 };
        nanosleep(&ts, NULL);
        close(fd);
        while ((fd = listener()) < 0) {
            if (errno == EADDRINUSE)
                atomic_fetch_add(&eaddrinuse, 1);
            nanosleep(&ts, NULL);
        }
        atomic_fetch_add(&rebinds, 1);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int nfiles = argc > 1 ? atoi(argv[1]) : 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    if ((rlim_t)nfiles + 64 > rl.rlim_cur) {
        rl.rlim_cur = (rlim_t)nfiles + 64 < rl.rlim_max ? (rlim_t)nfiles + 64 : rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    for (int i = 0; i < nfiles; i++)
        if (open("/dev/null", O_RDONLY) < 0)
            break;
    table = malloc(8192 * sizeof(*table));
    for (unsigned i = 0; i < 8192; i++)
        table[i] = i * 0x9e3779b97f4a7c15ul;
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = listener();
    socklen_t len = sizeof(addr);
    if (fd < 0 || getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        perror("listen");
        return 1;
    }
    pthread_t th;
    pthread_create(&th, NULL, rebind, &fd);
    printf("ready port=%d\n", ntohs(addr.sin_port));
    char line[64];
    while (fgets(line, sizeof(line), stdin))
        if (!strncmp(line, "status", 6)) {
            int ok = 1;
            for (unsigned i = 0; i < 8192; i++)
                ok &= table[i] == i * 0x9e3779b97f4a7c15ul;
            printf("status eaddrinuse=%lu rebinds=%lu data=%s\n", atomic_load(&eaddrinuse), atomic_load(&rebinds),
                   ok ? "ok" : "BAD");
        }
    return 0;
}
