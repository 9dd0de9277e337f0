/* census_regs.c - blocks that only a register or only thread-local storage
 * holds, for census_roots.sh.
 *
 * Thread "regholder" mallocs a 24,000-byte block, keeps its address only
 * in r12 (elsewhere only XOR-masked, and the stack it used scrubbed) and
 * blocks in a raw read() of a pipe: the copy a census forks sees the
 * block through no memory at all, only through that thread's registers.
 * Thread "tlsholder" keeps a 12,000-byte block only in a __thread
 * variable. 100 blocks of 5,000 bytes are leaked as a control ("L").
 * After "ready", a line on stdin ends both threads: each checks its
 * block's pattern and prints "verify ok" or "verify BAD".
 * g_aligned holds a 1 MiB block of 'A' from posix_memalign(4096): a
 * mapping of its own whose block header is not at the mapping's start
 * ("aligned_usable=N" is glibc's malloc_usable_size of it). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <unistd.h>

#define MASK ((uintptr_t)0x5a5a5a5a5a5a5a5aull)
#define REG_BYTES 24000
#define TLS_BYTES 12000

static int pipe_fd[2];
static volatile uintptr_t masked; /* the register block's address, masked */
static __thread char *tls_block;
static pthread_barrier_t started;
static int bad;
char *g_aligned;

static __attribute__((noinline)) void scrub_stack(void)
{
    volatile char junk[8192];
    memset((char *)junk, 0, sizeof(junk));
}

static __attribute__((noinline)) void make_block(void)
{
    char *p = malloc(REG_BYTES);
    memset(p, 'R', REG_BYTES);
    masked = (uintptr_t)p ^ MASK;
}

/* r12 = the block; read(pipe) blocks; the block's first byte after. */
static void *reg_holder(void *arg)
{
    (void)arg;
    make_block();
    scrub_stack();
    pthread_barrier_wait(&started);
    char c;
    uintptr_t after;
    __asm__ volatile("mov %[m], %%r12\n\t"
                     "xor %[k], %%r12\n\t"
                     "xor %%eax, %%eax\n\t" /* SYS_read */
                     "mov %[fd], %%edi\n\t"
                     "lea %[c], %%rsi\n\t"
                     "mov $1, %%edx\n\t"
                     "syscall\n\t"
                     "mov %%r12, %[a]\n\t"
                     "xor %%r12d, %%r12d\n\t"
                     : [a] "=r"(after), [c] "=m"(c)
                     : [m] "m"(masked), [k] "r"(MASK), [fd] "r"(pipe_fd[0])
                     : "rax", "rdi", "rsi", "rdx", "rcx", "r11", "r12", "memory");
    const char *p = (const char *)after;
    for (int i = 0; i < REG_BYTES; i++)
        if (p[i] != 'R') {
            bad = 1;
            break;
        }
    free((void *)after);
    return NULL;
}

static void *tls_holder(void *arg)
{
    (void)arg;
    tls_block = malloc(TLS_BYTES);
    memset(tls_block, 'T', TLS_BYTES);
    scrub_stack();
    pthread_barrier_wait(&started);
    char c;
    while (read(pipe_fd[0], &c, 1) < 0)
        ;
    for (int i = 0; i < TLS_BYTES; i++)
        if (tls_block[i] != 'T') {
            bad = 1;
            break;
        }
    free(tls_block);
    return NULL;
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (pipe(pipe_fd) != 0)
        return 1;
    for (int i = 0; i < 100; i++) {
        char *leak = malloc(5000);
        memset(leak, 'L', 5000);
    }
    if (posix_memalign((void **)&g_aligned, 4096, 1 << 20) != 0)
        return 1;
    memset(g_aligned, 'A', 1 << 20);
    printf("aligned_usable=%zu\n", malloc_usable_size(g_aligned));
    pthread_barrier_init(&started, NULL, 3);
    pthread_t a, b;
    pthread_create(&a, NULL, reg_holder, NULL);
    pthread_setname_np(a, "regholder");
    pthread_create(&b, NULL, tls_holder, NULL);
    pthread_setname_np(b, "tlsholder");
    pthread_barrier_wait(&started);
    printf("ready\n");
    char line[16];
    if (!fgets(line, sizeof(line), stdin))
        return 1;
    if (write(pipe_fd[1], "xx", 2) != 2)
        return 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("verify %s\n", bad ? "BAD" : "ok");
    return 0;
}
