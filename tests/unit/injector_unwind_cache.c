/* injector_unwind_cache.c - the safe-point walk's cache (injector/
 * unwind_cache.h) read against this very process: memory words, function
 * names from a module's symbols, and the .eh_frame_hdr search table
 * libunwind is handed. */
#include <criterion/criterion.h>
#include <libunwind.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "injector/maps.h"
#include "injector/safepoint.h"
#include "injector/unwind_cache.h"

static struct inj_maps maps;
static struct inj_uwc *uwc;

static void setup(void)
{
    cr_assert_eq(inj_maps_read(getpid(), &maps), 0);
    uwc = inj_uwc_new(&maps);
    cr_assert_not_null(uwc);
    inj_uwc_begin(uwc, getpid());
}

static void teardown(void)
{
    inj_uwc_free(uwc);
    inj_maps_free(&maps);
}

__attribute__((noinline)) int uwc_probe_fn(int x)
{
    __asm__ volatile("" ::: "memory");
    return x * 3 + 1;
}

Test(injector_unwind_cache, reads_words, .init = setup, .fini = teardown)
{
    static uint64_t word = 0x1122334455667788ull;
    uint64_t v = 0;
    cr_assert_eq(inj_uwc_read(uwc, (uint64_t)(uintptr_t)&word, &v), 0);
    cr_expect_eq(v, word);
    cr_expect_eq(inj_uwc_read(uwc, 8, &v), -1, "page zero is never readable");
}

Test(injector_unwind_cache, names_functions, .init = setup, .fini = teardown)
{
    char name[128];
    uint64_t off = 0;
    uint64_t ip = (uint64_t)(uintptr_t)&uwc_probe_fn + 4;
    cr_assert_eq(inj_uwc_name(uwc, ip, name, sizeof(name), &off), 0);
    cr_expect_str_eq(name, "uwc_probe_fn");
    cr_expect_eq(off, 4);
    /* whatever malloc this process runs (libc's or a sanitizer's), its
     * name marks the frame unsafe */
    void *(*m)(size_t) = malloc;
    cr_assert_eq(inj_uwc_name(uwc, (uint64_t)(uintptr_t)m + 1, name, sizeof(name), &off), 0);
    cr_expect(inj_safepoint_unsafe_name(name), "malloc named %s", name);
    void *heap = malloc(64);
    cr_expect_eq(inj_uwc_name(uwc, (uint64_t)(uintptr_t)heap, name, sizeof(name), &off), -1);
    free(heap);
}

Test(injector_unwind_cache, finds_the_search_table, .init = setup, .fini = teardown)
{
    uint64_t ip = (uint64_t)(uintptr_t)&uwc_probe_fn + 4;
    const unw_dyn_info_t *di = inj_uwc_table(uwc, ip);
    cr_assert_not_null(di);
    cr_expect_eq(di->format, UNW_INFO_FORMAT_REMOTE_TABLE);
    cr_expect(di->start_ip <= ip && ip < di->end_ip);
    cr_expect_gt(di->u.rti.table_len, 0);
    /* the table's first entry: a function start inside the module's code,
     * relative to the header (datarel sdata4) */
    uint64_t e = 0;
    cr_assert_eq(inj_uwc_read(uwc, di->u.rti.table_data, &e), 0);
    uint64_t first = di->u.rti.segbase + (uint64_t)(int64_t)(int32_t)(uint32_t)e;
    cr_expect(first >= di->start_ip && first < di->end_ip, "%#lx", (unsigned long)first);
    void *heap = malloc(64);
    cr_expect_null(inj_uwc_table(uwc, (uint64_t)(uintptr_t)heap));
    free(heap);
}
