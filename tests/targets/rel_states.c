/* rel_states.c - a target that puts itself into the states nobody attaches
 * to on purpose, and checks its own data across them (rel_states.sh,
 * rel_leader.sh).
 *
 *   rel_states vfork FLAGFILE  one thread; prints "ready", then vforks: the
 *                              child prints "child PID" and sleeps until
 *                              FLAGFILE exists, then _exits. The parent, back
 *                              from vfork, checks its table and allocates
 *                              (pattern-checked), prints "parent back
 *                              errors=E", then serves commands.
 *   rel_states threads         4 allocating workers (pattern-checked
 *                              blocks), commands read by a worker thread:
 *   rel_states exec N          execs itself every 200 ms ("exec N+1").
 *
 * Commands (one per line on stdin, answers on stdout):
 *   check       verifies every block and the table: "check ok errors=E"
 *   leaderexit  the main thread calls pthread_exit: "leader exiting"
 *   exhaust [K] opens /dev/null until EMFILE, then closes K of them again
 *               (K free descriptors): "exhausted N fds"
 *   release     closes them again: "released"
 *   lockgot     installs a seccomp filter (all threads) that fails
 *               mprotect of libc's RELRO pages with EPERM: libc's own
 *               slots, once hooked, cannot be put back ("lockgot 0")
 *   quit        stops, verifies, frees: "done errors=E", exit 0 when E is 0
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define WORKERS 4
#define SLOTS 256
#define RECORDS 1024
#define MAX_FDS 65536

struct record {
    uint64_t v[7];
    uint64_t sum;
};

static struct record *table;
static atomic_ulong errors;
static atomic_int stop_workers;
static int fds[MAX_FDS], nfds;
static pthread_mutex_t leader_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t leader_cond = PTHREAD_COND_INITIALIZER;
static int leader_go;

static uint64_t next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void bad(const char *what)
{
    atomic_fetch_add(&errors, 1);
    fprintf(stderr, "rel_states: %s\n", what);
}

static uint64_t sum(const struct record *r)
{
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 7; i++)
        s = (s ^ r->v[i]) * 0x100000001b3ull;
    return s;
}

static void make_table(void)
{
    uint64_t rng = 7;
    table = malloc(RECORDS * sizeof(*table));
    if (!table)
        exit(2);
    for (int i = 0; i < RECORDS; i++) {
        for (int k = 0; k < 7; k++)
            table[i].v[k] = next(&rng);
        table[i].sum = sum(&table[i]);
    }
}

static void check_table(void)
{
    for (int i = 0; i < RECORDS; i++)
        if (table[i].sum != sum(&table[i]))
            bad("a table record lost its checksum");
}

/* A block: [size][seed][bytes...]. */
static unsigned char *make_block(uint64_t *rng)
{
    size_t n = 16 + next(rng) % 2000;
    unsigned char *b = malloc(n + 16);
    if (!b) {
        bad("malloc failed");
        return NULL;
    }
    uint64_t seed = next(rng) | 1, s = seed;
    memcpy(b, &n, 8);
    memcpy(b + 8, &seed, 8);
    for (size_t i = 0; i < n; i++)
        b[16 + i] = (unsigned char)(next(&s) >> 24);
    return b;
}

static void check_block(const unsigned char *b)
{
    size_t n;
    uint64_t s;
    memcpy(&n, b, 8);
    memcpy(&s, b + 8, 8);
    for (size_t i = 0; i < n; i++)
        if (b[16 + i] != (unsigned char)(next(&s) >> 24)) {
            bad("a block lost its pattern");
            return;
        }
}

static unsigned char *slots[WORKERS][SLOTS];
static atomic_int check_req[WORKERS];

static void *worker(void *arg)
{
    int w = (int)(intptr_t)arg;
    uint64_t rng = 1000 + (uint64_t)w;
    struct timespec ts = { 0, 200000 };
    while (!atomic_load(&stop_workers)) {
        for (int k = 0; k < 32; k++) {
            int i = (int)(next(&rng) % SLOTS);
            if (slots[w][i]) {
                check_block(slots[w][i]);
                free(slots[w][i]);
            }
            slots[w][i] = make_block(&rng);
        }
        if (atomic_load(&check_req[w])) {
            for (int i = 0; i < SLOTS; i++)
                if (slots[w][i])
                    check_block(slots[w][i]);
            atomic_store(&check_req[w], 0);
        }
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void check_all(void)
{
    for (int w = 0; w < WORKERS; w++)
        atomic_store(&check_req[w], 1);
    struct timespec ts = { 0, 1000000 };
    for (int w = 0; w < WORKERS; w++)
        for (int i = 0; i < 20000 && atomic_load(&check_req[w]); i++)
            nanosleep(&ts, NULL);
    check_table();
}

/* libc's RELRO range (its GOT: read-only, so restoring a slot there needs
 * mprotect). */
static int relro_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    uintptr_t *r = data;
    if (!strstr(info->dlpi_name, "libc.so.6"))
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_GNU_RELRO) {
            r[0] = (info->dlpi_addr + info->dlpi_phdr[i].p_vaddr) & ~(uintptr_t)(sysconf(_SC_PAGESIZE) - 1);
            r[1] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr + info->dlpi_phdr[i].p_memsz;
        }
    return 1;
}

static int lock_got(void)
{
    uintptr_t r[2] = { 0, 0 };
    dl_iterate_phdr(relro_cb, r);
    if (!r[0] || (r[0] >> 32) != ((r[1] - 1) >> 32))
        return -1;
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 0, 6),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]) + 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)(r[0] >> 32), 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)r[0], 0, 2),
        BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, (uint32_t)r[1], 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
        return -1;
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static void commands(void)
{
    char line[64];
    while (fgets(line, sizeof(line), stdin)) {
        if (!strncmp(line, "check", 5)) {
            check_all();
            printf("check ok errors=%lu\n", atomic_load(&errors));
        } else if (!strncmp(line, "leaderexit", 10)) {
            pthread_mutex_lock(&leader_lock);
            leader_go = 1;
            pthread_cond_signal(&leader_cond);
            pthread_mutex_unlock(&leader_lock);
            printf("leader exiting\n");
        } else if (!strncmp(line, "exhaust", 7)) {
            int fd;
            int leave = atoi(line + 7);
            while (nfds < MAX_FDS && (fd = open("/dev/null", O_RDONLY)) >= 0)
                fds[nfds++] = fd;
            int e = errno;
            for (; leave > 0 && nfds > 0; leave--)
                close(fds[--nfds]);
            printf("exhausted %d fds (%s)\n", nfds, strerror(e));
        } else if (!strncmp(line, "release", 7)) {
            while (nfds > 0)
                close(fds[--nfds]);
            printf("released\n");
        } else if (!strncmp(line, "lockgot", 7)) {
            printf("lockgot %d\n", lock_got());
        } else if (!strncmp(line, "quit", 4)) {
            break;
        }
    }
    atomic_store(&stop_workers, 1);
}

static void *command_thread(void *arg)
{
    pthread_t *th = arg;
    commands();
    for (int w = 0; w < WORKERS; w++)
        pthread_join(th[w], NULL);
    check_table();
    for (int w = 0; w < WORKERS; w++)
        for (int i = 0; i < SLOTS; i++)
            if (slots[w][i]) {
                check_block(slots[w][i]);
                free(slots[w][i]);
            }
    free(table);
    printf("done errors=%lu\n", atomic_load(&errors));
    exit(atomic_load(&errors) ? 1 : 0);
}

static int run_threads(void)
{
    static pthread_t th[WORKERS];
    pthread_t cmd;
    make_table();
    /* pthread_exit unwinds with libgcc_s, which glibc dlopens on first use:
     * load it now, so that the main thread can exit after "exhaust". */
    if (!dlopen("libgcc_s.so.1", RTLD_NOW))
        return 2;
    for (int w = 0; w < WORKERS; w++)
        if (pthread_create(&th[w], NULL, worker, (void *)(intptr_t)w))
            return 2;
    if (pthread_create(&cmd, NULL, command_thread, th))
        return 2;
    printf("ready\n");
    pthread_mutex_lock(&leader_lock);
    while (!leader_go)
        pthread_cond_wait(&leader_cond, &leader_lock);
    pthread_mutex_unlock(&leader_lock);
    pthread_exit(NULL);
}

static int run_vfork(const char *flag)
{
    uint64_t rng = 99;
    make_table();
    printf("ready\n");
    pid_t child = vfork();
    if (child == 0) {
        char msg[64];
        int n = snprintf(msg, sizeof(msg), "child %d\n", (int)getpid());
        if (write(1, msg, (size_t)n) < 0)
            _exit(3);
        struct timespec ts = { 0, 10000000 };
        while (access(flag, F_OK) != 0)
            nanosleep(&ts, NULL);
        _exit(0);
    }
    if (child < 0)
        return 2;
    waitpid(child, NULL, 0);
    check_table();
    for (int round = 0; round < 20000; round++) {
        unsigned char *b = make_block(&rng);
        if (b) {
            check_block(b);
            free(b);
        }
    }
    printf("parent back errors=%lu\n", atomic_load(&errors));
    commands();
    check_table();
    free(table);
    printf("done errors=%lu\n", atomic_load(&errors));
    return atomic_load(&errors) ? 1 : 0;
}

static int run_exec(char *self, int n)
{
    char arg[32];
    struct timespec ts = { 0, 200000000 };
    uint64_t rng = (uint64_t)n + 5;
    for (int i = 0; i < 100; i++) {
        unsigned char *b = make_block(&rng);
        if (b) {
            check_block(b);
            free(b);
        }
    }
    if (n == 0)
        printf("ready\n");
    fflush(stdout);
    nanosleep(&ts, NULL);
    snprintf(arg, sizeof(arg), "%d", n + 1);
    char *argv[] = { self, "exec", arg, NULL };
    execv("/proc/self/exe", argv);
    return 2;
}

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3 && !strcmp(argv[1], "vfork"))
        return run_vfork(argv[2]);
    if (argc >= 2 && !strcmp(argv[1], "threads"))
        return run_threads();
    if (argc >= 3 && !strcmp(argv[1], "exec"))
        return run_exec(argv[0], atoi(argv[2]));
    fprintf(stderr, "usage: rel_states vfork FLAGFILE | threads | exec N\n");
    return 2;
}
