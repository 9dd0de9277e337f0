/* inject_avx_clobber.c - a library tests/e2e/inject_avx.sh injects into
 * build/targets/inj_avx: its function overwrites every vector register the
 * CPU has (all caller-saved in the x86-64 ABI, so any injected call may do
 * this), the AVX-512 mask registers, and PKRU where the OS enables it.
 * Only the injector's restore of the thread's full XSAVE state gives the
 * target its values back. Built by the test; not a target program. */
#include <cpuid.h>

__attribute__((target("avx2"))) static void clobber_ymm(void)
{
    __asm__ volatile(".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15\n"
                     "vpcmpeqd %%ymm\\r, %%ymm\\r, %%ymm\\r\n"
                     ".endr\n"
                     ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

__attribute__((target("avx512f,avx512bw"))) static void clobber_zmm(void)
{
    __asm__ volatile(".irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
                     "vpternlogd $0xff, %%zmm\\r, %%zmm\\r, %%zmm\\r\n"
                     ".endr\n"
                     ".irp r,1,2,3,4,5,6,7\n"
                     "kxnorq %%k\\r, %%k\\r, %%k\\r\n"
                     ".endr\n"
                     ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                       "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16",
                       "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm24",
                       "xmm25", "xmm26", "xmm27", "xmm28", "xmm29", "xmm30", "xmm31", "k1", "k2",
                       "k3", "k4", "k5", "k6", "k7");
}

/* Returns what it changed: 1 ymm0-15, 2 zmm0-31 and k1-7, +4 PKRU. */
int hi_avx_clobber(const char *arg)
{
    unsigned a, b, c, d;
    int what = 0;

    (void)arg;
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")) {
        clobber_zmm();
        what = 2;
    } else if (__builtin_cpu_supports("avx2")) {
        clobber_ymm();
        what = 1;
    }
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (c & (1u << 4))) {
        __asm__ volatile("wrpkru" ::"a"(0u), "c"(0u), "d"(0u));
        what += 4;
    }
    return what;
}
