/* pl_nocfi - allocates through a hand-written assembly function that has
 * no unwind information (no .cfi directives, so no FDE in .eh_frame) and
 * zeroes rbp before it calls malloc, so that neither a CFI rule nor the
 * frame-pointer guess can step it: for tests/e2e/payload_truncated.sh,
 * which checks that the report says how many stacks end early there.
 * Every 2 ms the main loop replaces one block of a ring of 256 through
 * asm_alloc (stacks that end at asm_alloc) and one through plain_alloc (a
 * C function: whole stacks). Prints "ready". */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

void *asm_alloc(size_t n);

/* push rbp keeps the stack aligned for the call; rbp = 0 is what JIT
 * code or an assembly routine that uses rbp as a general register leaves. */
__asm__(".text\n"
        ".globl asm_alloc\n"
        ".type asm_alloc, @function\n"
        "asm_alloc:\n"
        "    push %rbp\n"
        "    xor %ebp, %ebp\n"
        "    call malloc@PLT\n"
        "    pop %rbp\n"
        "    ret\n"
        ".size asm_alloc, .-asm_alloc\n");

__attribute__((noinline)) static void *plain_alloc(size_t n)
{
    return malloc(n);
}

static void *volatile ring_asm[256], *volatile ring_c[256];

int main(void)
{
    printf("ready\n");
    fflush(stdout);
    for (unsigned long i = 0;; i++) {
        unsigned k = (unsigned)(i % 256);
        free(ring_asm[k]);
        ring_asm[k] = asm_alloc(100 + k);
        free(ring_c[k]);
        ring_c[k] = plain_alloc(100 + k);
        usleep(2000);
    }
}
