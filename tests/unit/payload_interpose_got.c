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

/* One read of the maps for many pages (payload/sys/procmaps.h): each
 * page's protection is what a read for that page alone says, pages in
 * no mapping are -1, and pages spread over several mappings, several per
 * mapping and past the last one are all answered. */
Test(got, protections_of_many_pages_in_one_read)
{
    long pg = sysconf(_SC_PAGESIZE);
    cr_assert_gt(pg, 0);
    /* Six pages: rw, r, none, (hole), rx, rw; the hole is unmapped. */
    uint8_t *base = mmap(NULL, 6 * (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert_neq(base, MAP_FAILED);
    cr_assert_eq(mprotect(base + pg, (size_t)pg, PROT_READ), 0);
    cr_assert_eq(mprotect(base + 2 * pg, (size_t)pg, PROT_NONE), 0);
    cr_assert_eq(munmap(base + 3 * pg, (size_t)pg), 0);
    cr_assert_eq(mprotect(base + 4 * pg, (size_t)pg, PROT_READ | PROT_EXEC), 0);
    int stack_var = 0;
    uintptr_t pages[9];
    size_t n = 0;
    pages[n++] = 4096; /* below every mapping (mmap_min_addr) */
    for (int i = 0; i < 6; i++)
        pages[n++] = (uintptr_t)base + (uintptr_t)i * (uintptr_t)pg;
    pages[n++] = (uintptr_t)&stack_var & ~(uintptr_t)(pg - 1);
    pages[n++] = ~(uintptr_t)0 & ~(uintptr_t)(pg - 1); /* above every mapping */
    /* ascending, as the caller keeps them */
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && pages[j - 1] > pages[j]; j--) {
            uintptr_t t = pages[j];
            pages[j] = pages[j - 1];
            pages[j - 1] = t;
        }
    signed char prot[9];
    cr_assert_eq(pl_maps_prot_pages(pages, n, prot), 0);
    for (size_t i = 0; i < n; i++) {
        int one = -1;
        int r = pl_maps_prot(pages[i], &one);
        cr_expect_eq(prot[i], r == 0 ? one : -1, "page %#lx: %d from the one read, %d (rc %d) alone",
                     (unsigned long)pages[i], prot[i], one, r);
    }
    for (size_t i = 0; i < n; i++) {
        uintptr_t p = pages[i];
        if (p == (uintptr_t)base)
            cr_expect_eq(prot[i], PROT_READ | PROT_WRITE);
        else if (p == (uintptr_t)base + (uintptr_t)pg)
            cr_expect_eq(prot[i], PROT_READ);
        else if (p == (uintptr_t)base + 2 * (uintptr_t)pg)
            cr_expect_eq(prot[i], 0);
        else if (p == (uintptr_t)base + 3 * (uintptr_t)pg || p == 4096 || p == (~(uintptr_t)0 & ~(uintptr_t)(pg - 1)))
            cr_expect_eq(prot[i], -1);
        else if (p == (uintptr_t)base + 4 * (uintptr_t)pg)
            cr_expect_eq(prot[i], PROT_READ | PROT_EXEC);
    }
    cr_expect_eq(pl_maps_prot_pages(pages, 0, prot), 0);
    munmap(base, 6 * (size_t)pg);
}
