/* inj_avx.c - a target whose main thread keeps known values in the vector
 * registers while heapinject injects into it, and checks them all the time.
 *
 *   inj_avx [avx2]
 *
 * The main thread (the one the injector picks first) runs one assembly loop
 * that loads a pattern into every vector register the CPU has (ymm0-15, or
 * with AVX-512 zmm0-31 and the mask registers k1-k7; PKRU too where the OS
 * enables protection keys), then over and over stores them all and compares
 * them with the pattern, using general registers only. A mismatch is
 * counted and the pattern loaded again. "avx2" limits it to ymm0-15 even on
 * an AVX-512 CPU. A second thread prints, every 20 ms,
 *
 *   iter N bad M
 *
 * (N checks done, M mismatches), so a test can see both that the loop ran
 * on after each injection and that it never saw a changed register. All
 * vector registers are caller-saved: an injected call (dlopen runs glibc's
 * AVX2/EVEX string functions) may change any of them, and only the
 * injector's restore of the full XSAVE state puts them back.
 * Prints "ready features ..." once the loop runs. */
#include <cpuid.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Pattern and dump: 32 registers of 64 bytes, then k0-k7 (k0 unused, 0),
 * then PKRU in its own word. */
#define VEC_BYTES (32 * 64)
#define MASK_OFF VEC_BYTES
#define PKRU_OFF (VEC_BYTES + 64)
#define CMP_QWORDS ((VEC_BYTES + 64) / 8)

static uint8_t expected[VEC_BYTES + 64 + 8] __attribute__((aligned(64)));
static uint8_t dump[VEC_BYTES + 64 + 8] __attribute__((aligned(64)));
static volatile uint64_t iters, bad, bad_at;

static bool os_pku(void)
{
    unsigned a, b, c, d;

    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
        return false;
    return c & (1u << 4); /* OSPKE: CR4.PKE set by the kernel */
}

/* AVX2: ymm0-15, 32 bytes each at 64-byte strides (the compare covers the
 * zero bytes in between in both buffers). */
__attribute__((target("avx2"))) static void loop_avx2(void)
{
    __asm__ volatile(
        "1:\n"
        ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
        "vmovdqu \\r*64(%[exp]), %%ymm\\r\n"
        ".endr\n"
        "2:\n"
        ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
        "vmovdqu %%ymm\\r, \\r*64(%[dump])\n"
        ".endr\n"
        "mov %[exp], %%rsi\n"
        "mov %[dump], %%rdi\n"
        "mov %[n], %%ecx\n"
        "cld\n"
        "repe cmpsq\n"
        "jne 3f\n"
        "lock incq %[iters]\n"
        "jmp 2b\n"
        "3:\n"
        "sub %[exp], %%rsi\n"
        "mov %%rsi, %[at]\n"
        "lock incq %[bad]\n"
        "jmp 1b\n"
        :
        : [exp] "r"(expected), [dump] "r"(dump), [n] "i"(CMP_QWORDS), [iters] "m"(iters),
          [bad] "m"(bad), [at] "m"(bad_at)
        : "rsi", "rdi", "rcx", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5",
          "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14",
          "xmm15");
}

/* AVX-512: zmm0-31 (all 64 bytes) and k1-k7; PKRU when pku is set. */
__attribute__((target("avx512f,avx512bw"))) static void loop_avx512(int pku)
{
    __asm__ volatile(
        "1:\n"
        ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "vmovdqu64 \\r*64(%[exp]), %%zmm\\r\n"
        ".endr\n"
        ".irp r,1,2,3,4,5,6,7\n"
        "kmovq %c[moff]+\\r*8(%[exp]), %%k\\r\n"
        ".endr\n"
        "test %[pku], %[pku]\n"
        "jz 2f\n"
        "mov %c[poff](%[exp]), %%eax\n"
        "xor %%ecx, %%ecx\n"
        "xor %%edx, %%edx\n"
        "wrpkru\n"
        "2:\n"
        ".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        "vmovdqu64 %%zmm\\r, \\r*64(%[dump])\n"
        ".endr\n"
        ".irp r,1,2,3,4,5,6,7\n"
        "kmovq %%k\\r, %c[moff]+\\r*8(%[dump])\n"
        ".endr\n"
        "test %[pku], %[pku]\n"
        "jz 4f\n"
        "xor %%ecx, %%ecx\n"
        "rdpkru\n"
        "mov %[exp], %%rsi\n" /* where(): 0 names PKRU */
        "cmp %c[poff](%[exp]), %%eax\n"
        "jne 3f\n"
        "4:\n"
        "mov %[exp], %%rsi\n"
        "mov %[dump], %%rdi\n"
        "mov %[n], %%ecx\n"
        "cld\n"
        "repe cmpsq\n"
        "jne 3f\n"
        "lock incq %[iters]\n"
        "jmp 2b\n"
        "3:\n"
        "sub %[exp], %%rsi\n"
        "mov %%rsi, %[at]\n"
        "lock incq %[bad]\n"
        "jmp 1b\n"
        :
        : [exp] "r"(expected), [dump] "r"(dump), [n] "i"(CMP_QWORDS), [iters] "m"(iters),
          [bad] "m"(bad), [at] "m"(bad_at), [pku] "r"(pku), [moff] "i"(MASK_OFF), [poff] "i"(PKRU_OFF)
        : "rax", "rdx", "rsi", "rdi", "rcx", "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3",
          "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13",
          "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22",
          "xmm23", "xmm24", "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31",
          "k1", "k2", "k3", "k4", "k5", "k6", "k7");
}

/* Names the register of a mismatch from the compare's stop: rsi is one
 * qword past the first that differs (0 after the PKRU check). */
static const char *where(uint64_t off)
{
    static char buf[64];

    if (off == 0)
        return "pkru";
    off -= 8;
    if (off < VEC_BYTES)
        snprintf(buf, sizeof(buf), "vector register %u bytes %u-%u", (unsigned)(off / 64),
                 (unsigned)(off % 64), (unsigned)(off % 64 + 7));
    else
        snprintf(buf, sizeof(buf), "k%u", (unsigned)((off - MASK_OFF) / 8));
    return buf;
}

static void *reporter(void *arg)
{
    (void)arg;
    for (;;) {
        printf("iter %llu bad %llu\n", (unsigned long long)iters, (unsigned long long)bad);
        if (bad)
            printf("last change in %s\n", where(bad_at));
        fflush(stdout);
        struct timespec ts = { 0, 20 * 1000000L };
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    bool pku = avx512 && os_pku();
    pthread_t th;

    if (argc > 1 && !strcmp(argv[1], "avx2"))
        avx512 = pku = false;
    if (!__builtin_cpu_supports("avx2")) {
        printf("no avx2\n");
        return 77;
    }
    /* Every byte distinct from its neighbours and from zero, upper halves
     * included, so that a zeroed upper half (vzeroupper) or a register
     * swapped with another shows. */
    for (int r = 0; r < 32; r++)
        for (int i = 0; i < 64; i++)
            expected[r * 64 + i] = (uint8_t)(1 + r * 37 + i * 11) | 1;
    if (!avx512)
        for (int r = 0; r < 32; r++)
            memset(expected + r * 64 + (r < 16 ? 32 : 0), 0, r < 16 ? 32 : 64);
    if (avx512)
        for (int k = 1; k < 8; k++)
            for (int i = 0; i < 8; i++)
                expected[MASK_OFF + k * 8 + i] = (uint8_t)(0x5a + k * 29 + i * 3);
    if (pku) {
        /* Access and write disabled for keys 1-15; key 0 (all our memory)
         * stays open. */
        uint32_t v = 0x55555554u;

        memcpy(expected + PKRU_OFF, &v, 4);
    }
    printf("ready features %s%s\n", avx512 ? "avx512 zmm0-31 k1-7" : "avx2 ymm0-15",
           pku ? " pkru" : "");
    fflush(stdout);
    if (pthread_create(&th, NULL, reporter, NULL))
        return 1;
    if (avx512)
        loop_avx512(pku);
    else
        loop_avx2();
    return 0;
}
