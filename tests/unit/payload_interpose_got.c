/* payload_interpose_got.c - reading loaded modules (payload/sys/dynelf.h) and writing a
 * slot on a read-only page with its protection put back (payload/interpose/got.h). */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "payload/sys/dynelf.h"
#include "payload/interpose/family.h"
#include "payload/interpose/got.h"
#include "payload/sys/procmaps.h"

struct find {
    const char *name;
    uintptr_t malloc_addr;
    uintptr_t named_addr; /* of name, when given */
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
    if (f->name)
        f->named_addr = pl_dyn_lookup(&d, f->name);
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

/* Every module's lookups through DT_GNU_HASH against the linear scan
 * (the same struct with gnu_hash cleared): each symbol's name, and names
 * no module has. */
struct both {
    size_t modules, names, differ;
};

static int compare_lookups(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct both *b = data;
    struct pl_dyn d;
    if (pl_dyn_parse(info, &d) != 0 || !d.gnu_hash)
        return 0;
    struct pl_dyn linear = d;
    linear.gnu_hash = NULL;
    b->modules++;
    static const char *const absent[] = { "", "heapinject_no_such_symbol", "mallocx_not_here" };
    for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
        b->differ += pl_dyn_lookup(&d, absent[i]) != 0 || pl_dyn_lookup(&linear, absent[i]) != 0;
    for (size_t i = 1; i < d.nsyms; i++) {
        const char *n = pl_dyn_sym_name(&d, i);
        if (!n || !n[0])
            continue;
        b->names++;
        b->differ += pl_dyn_lookup(&d, n) != pl_dyn_lookup(&linear, n);
    }
    return 0;
}

Test(got, hashed_lookup_finds_what_the_linear_scan_finds)
{
    struct both b = { 0 };
    dl_iterate_phdr(compare_lookups, &b);
    cr_expect_geq(b.modules, 2); /* libc and more */
    cr_expect_gt(b.names, 1000);
    cr_expect_eq(b.differ, 0, "%zu of %zu names answered differently", b.differ, b.names);
    /* A name with an old hidden version and a default one (realpath@
     * GLIBC_2.2.5, realpath@@GLIBC_2.3): the default, as dlsym says. */
    void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
    cr_assert_not_null(h);
    struct find f = { .name = "realpath" };
    dl_iterate_phdr(find_libc, &f);
    cr_expect_eq(f.named_addr, (uintptr_t)dlsym(h, "realpath"));
}

Test(got, write_read_only_slot_restores_protection)
{
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t *page = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(page, MAP_FAILED);
    page[3] = 111;
    cr_assert_eq(mprotect(page, (size_t)pg, PROT_READ), 0);
    int lost = -1, prot = 0;
    cr_assert_eq(pl_got_write((uintptr_t)&page[3], 222, PROT_READ, &lost), 0);
    cr_expect_eq(lost, 0);
    cr_expect_eq(pl_got_read((uintptr_t)&page[3]), 222);
    cr_assert_eq(pl_maps_prot((uintptr_t)page, &prot), 0);
    cr_expect_eq(prot, PROT_READ);
    /* unaligned or unmapped: refused, nothing written */
    cr_expect_neq(pl_got_write((uintptr_t)&page[3] + 1, 1, PROT_READ, &lost), 0);
    munmap(page, (size_t)pg);
    cr_expect_neq(pl_got_write((uintptr_t)&page[3], 1, PROT_READ, &lost), 0);
}

/* The protection of libc's GOT (RELRO: read-only) and of a writable data
 * word, from /proc and, out of descriptors, from the program headers. */
struct prot_arg {
    uintptr_t relro_addr, data_addr;
    int relro_prot, data_prot, relro_err, data_err;
};

static int prot_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct prot_arg *a = data;
    if (!strstr(info->dlpi_name, "libc.so.6"))
        return 0;
    for (unsigned i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO)
            a->relro_addr = info->dlpi_addr + ph->p_vaddr + ph->p_memsz - 8;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W))
            a->data_addr = (info->dlpi_addr + ph->p_vaddr + ph->p_memsz - 8) & ~(uintptr_t)7;
    }
    a->relro_err = pl_got_prot(info, a->relro_addr, &a->relro_prot);
    a->data_err = pl_got_prot(info, a->data_addr, &a->data_prot);
    return 1;
}

static void check_libc_prots(void)
{
    struct prot_arg a = { 0 };
    dl_iterate_phdr(prot_cb, &a);
    cr_assert_neq(a.relro_addr, 0);
    cr_expect_eq(a.relro_err, 0);
    cr_expect_eq(a.relro_prot, PROT_READ);
    cr_expect_eq(a.data_err, 0);
    cr_expect_eq(a.data_prot, PROT_READ | PROT_WRITE);
}

Test(got, protection_with_and_without_descriptors)
{
    check_libc_prots();
    /* Use up every descriptor: /proc cannot be opened, the program headers
     * must give the same answer. */
    struct rlimit old, low;
    cr_assert_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
    low = old;
    low.rlim_cur = 256;
    cr_assert_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
    int fds[4096], n = 0, fd;
    while (n < 4096 && (fd = dup(0)) >= 0)
        fds[n++] = fd;
    cr_assert_lt(n, 4096, "RLIMIT_NOFILE too high for this test");
    int prot;
    cr_expect_eq(pl_maps_prot((uintptr_t)&prot, &prot), -EMFILE);
    check_libc_prots();
    while (n > 0)
        close(fds[--n]);
    setrlimit(RLIMIT_NOFILE, &old);
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
