/* cli_jit - calls malloc from machine code it wrote into an anonymous
 * executable mapping, as a JIT compiler's code does (node, Java, LuaJIT):
 * the frame of that code has no module and no symbols. For
 * tests/e2e/cli_jit.sh: every report format marks the frame [jit] with its
 * mapping, and --by module counts it under [jit] (issue 16). The mapping
 * is first made writable to copy the code in, then read+execute, as V8
 * does (W^X). Prints "ready" and the code's address; runs until killed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

/* void *jit_alloc(size_t n, void *(*alloc)(size_t)) { return alloc(n); }
 * (alloc is alloc_for_jit, which calls malloc).
 * with the stack kept 16-byte aligned across the call. */
static const unsigned char code[] = {
    0x48, 0x83, 0xec, 0x08, /* sub  $8, %rsp */
    0xff, 0xd6,             /* call *%rsi */
    0x48, 0x83, 0xc4, 0x08, /* add  $8, %rsp */
    0xc3,                   /* ret */
};

static void *volatile kept[1 << 16];

/* What the JIT code calls: malloc through this module's (patched) slot. */
__attribute__((noinline)) void *alloc_for_jit(size_t n)
{
    return malloc(n);
}

int main(void)
{
    unsigned char *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
        return 1;
    memcpy(page, code, sizeof(code));
    if (mprotect(page, 4096, PROT_READ | PROT_EXEC))
        return 1;
    void *(*jit_alloc)(size_t, void *(*)(size_t)) = (void *(*)(size_t, void *(*)(size_t)))(uintptr_t)page;
    printf("ready jit=%p\n", (void *)page);
    fflush(stdout);
    for (unsigned long i = 0;; i++) {
        void *p = jit_alloc(512, alloc_for_jit);
        if (!p)
            return 1;
        void *old = kept[i % (1 << 16)];
        kept[i % (1 << 16)] = p;
        free(old);
        if (i % 64 == 0) {
            struct timespec ts = { 0, 1000 * 1000 };
            nanosleep(&ts, NULL);
        }
    }
}
