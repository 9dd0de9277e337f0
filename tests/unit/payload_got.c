/* payload_got.c - reading loaded modules (payload/dynelf.h) and writing a
 * slot on a read-only page with its protection put back (payload/got.h). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "payload/dynelf.h"
#include "payload/family.h"
#include "payload/got.h"
#include "payload/procmaps.h"

struct find {
    const char *name;
    uintptr_t malloc_addr;
    size_t nsyms;
    int found;
};

static int find_libc(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find *f = data;
    if (!strstr(info->dlpi_name, "libc.so.6"))
        return 0;
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) != 0)
        return 0;
    f->found = 1;
    f->nsyms = d.nsyms;
    f->malloc_addr = pl_dyn_lookup(&d, "malloc");
    return 1;
}

Test(got, libc_symbols_from_gnu_hash)
{
    struct find f = { 0 };
    dl_iterate_phdr(find_libc, &f);
    cr_assert(f.found);
    cr_expect_gt(f.nsyms, 1000);
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    cr_expect_eq(f.malloc_addr, (uintptr_t)dlsym(h, "malloc"));
}

Test(got, write_read_only_slot_restores_protection)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t *page = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(page, MAP_FAILED);
    page[3] = 111;
    cr_assert_eq(mprotect(page, (size_t)pg, PROT_READ), 0);
    int lost = -1, prot = 0;
    cr_assert_eq(pl_got_write((uintptr_t)&page[3], 222, &lost), 0);
    cr_expect_eq(lost, 0);
    cr_expect_eq(pl_got_read((uintptr_t)&page[3]), 222);
    cr_assert_eq(pl_maps_prot((uintptr_t)page, &prot), 0);
    cr_expect_eq(prot, PROT_READ);
    /* unaligned or unmapped: refused, nothing written */
    cr_expect_neq(pl_got_write((uintptr_t)&page[3] + 1, 1, &lost), 0);
    munmap(page, (size_t)pg);
    cr_expect_neq(pl_got_write((uintptr_t)&page[3], 1, &lost), 0);
}

Test(got, function_names)
{
    cr_expect_eq(pl_func_by_name("malloc"), PL_F_MALLOC);
    cr_expect_eq(pl_func_by_name("pvalloc"), PL_F_PVALLOC);
    cr_expect_eq(pl_func_by_name("reallocarray"), PL_F_REALLOCARRAY);
    cr_expect_eq(pl_func_by_name("mallocx"), -1);
    cr_expect_eq(pl_func_by_name("strdup"), -1);
    for (unsigned f = 0; f < PL_F_COUNT; f++)
        cr_expect_eq(pl_func_by_name(pl_func_name(f)), (int)f);
}
