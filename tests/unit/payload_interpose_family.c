/* payload_interpose_family.c - allocator families (payload/interpose/family.h): glibc's libc is
 * recognised, and the inline usable size of its blocks is exactly what
 * malloc_usable_size says, from tiny blocks to mmapped ones. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <malloc.h>
#include <stdlib.h>

#include "payload/interpose/family.h"

static uintptr_t module_of(void *fn)
{
    Dl_info di;
    cr_assert(dladdr(fn, &di) != 0);
    return (uintptr_t)di.dli_fbase;
}

Test(family, glibc_recognised)
{
    int f = pl_family_get(module_of((void *)malloc));
    cr_assert_geq(f, 0);
    cr_expect_eq(pl_families[f].glibc, 1, "libc.so.6 not recognised as glibc");
    cr_expect_eq((void *)pl_families[f].usable, (void *)malloc_usable_size);
    /* a module that defines no allocator is not glibc */
    void *crit = dlsym(RTLD_DEFAULT, "criterion_run_all_tests");
    cr_assert_not_null(crit);
    int g = pl_family_get(module_of(crit)); /* libcriterion */
    cr_assert_geq(g, 0);
    cr_expect_eq(pl_families[g].glibc, 0);
}

/* Every size class of the tcache, the bins, the top chunk and mmap. */
Test(family, glibc_usable_matches_malloc_usable_size)
{
    static void *blocks[4096];
    unsigned n = 0;
    for (size_t s = 0; s < 2048; s++)
        blocks[n++] = malloc(s);
    for (size_t s = 2048; s < (4u << 20); s = s * 5 / 4 + 3)
        blocks[n++] = malloc(s);
    blocks[n++] = calloc(1000, 3);
    blocks[n++] = calloc(1, 1u << 20); /* mmapped */
    blocks[n++] = aligned_alloc(64, 200);
    blocks[n++] = memalign(4096, 100000);
    blocks[n++] = memalign(4096, 1u << 20);
    blocks[n++] = realloc(malloc(10), 3000);
    cr_assert_lt(n, sizeof(blocks) / sizeof(blocks[0]));
    for (unsigned i = 0; i < n; i++) {
        cr_assert_not_null(blocks[i]);
        cr_expect_eq(pl_glibc_usable(blocks[i]), malloc_usable_size(blocks[i]), "block %u", i);
    }
    for (unsigned i = 0; i < n; i++)
        free(blocks[i]);
}
