/* cli_symbolize.c - the libdw symbolizer on this test's own process:
 * function names, file:line, inlined frames, heapinject's frames dropped,
 * deleted modules named as such; and C++ demangling. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/demangle.h"
#include "cli/symbolize.h"

static int call_line, inline_line, inline_call_line;

__attribute__((noinline)) static uint64_t return_address(void)
{
    uint64_t r = (uint64_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) uint64_t sym_test_caller(void)
{
    uint64_t r = return_address(); call_line = __LINE__;
    __asm__ volatile("" ::: "memory");
    return r;
}

static inline __attribute__((always_inline)) uint64_t sym_test_inlined(void)
{
    uint64_t r = return_address(); inline_line = __LINE__;
    return r;
}

__attribute__((noinline)) uint64_t sym_test_outer(void)
{
    uint64_t r = sym_test_inlined(); inline_call_line = __LINE__;
    __asm__ volatile("" ::: "memory");
    return r;
}

static char *read_maps(size_t *len)
{
    char *buf = NULL;
    size_t cap = 0;
    FILE *f = fopen("/proc/self/maps", "r");
    FILE *m = open_memstream(&buf, &cap);
    char line[4096];
    while (fgets(line, sizeof(line), f))
        fputs(line, m);
    fclose(f);
    fclose(m);
    *len = strlen(buf);
    return buf;
}

static void one_stack(struct cli_profile *p, const uint64_t *pcs, uint32_t n, const char *prefix_maps)
{
    size_t len;
    char *maps = read_maps(&len);
    memset(p, 0, sizeof(*p));
    size_t pl = prefix_maps ? strlen(prefix_maps) : 0;
    p->maps = malloc(pl + len + 1);
    memcpy(p->maps, prefix_maps ? prefix_maps : "", pl);
    memcpy(p->maps + pl, maps, len + 1);
    p->maps_len = pl + len;
    free(maps);
    p->nstacks = 1;
    p->stacks = calloc(1, sizeof(*p->stacks));
    p->stacks[0].npcs = n;
    p->stacks[0].pcs = malloc(n * sizeof(uint64_t));
    memcpy(p->stacks[0].pcs, pcs, n * sizeof(uint64_t));
}

static const char *base(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : path;
}

Test(cli_symbolize, function_file_and_line_of_a_return_address)
{
    uint64_t pc = sym_test_caller();
    struct cli_profile p;
    one_stack(&p, &pc, 1, NULL);
    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    cr_assert_not_null(s);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    struct cli_stack *st = &p.stacks[0];
    cr_assert_eq(st->nframes, 1);
    cr_expect_str_eq(st->frames[0].function, "sym_test_caller");
    cr_expect_str_eq(base(st->frames[0].file), "cli_symbolize.c");
    cr_expect_eq(st->frames[0].line, call_line);
    cr_expect_eq(st->frames[0].addr, pc);
    cr_expect(!st->frames[0].inlined);
    cr_expect_not_null(st->frames[0].module);
    cr_expect_eq(cli_symbolizer_unreadable(s, NULL), 0);
    /* Same maps again: served from the cache, same answer. */
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    cr_expect_str_eq(p.stacks[0].frames[0].function, "sym_test_caller");
    cli_symbolizer_free(s);
    cli_profile_free(&p);
}

Test(cli_symbolize, inlined_frames_come_first_and_are_marked)
{
    uint64_t pc = sym_test_outer();
    struct cli_profile p;
    one_stack(&p, &pc, 1, NULL);
    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    struct cli_stack *st = &p.stacks[0];
    cr_assert_eq(st->nframes, 2);
    cr_expect_str_eq(st->frames[0].function, "sym_test_inlined");
    cr_expect(st->frames[0].inlined);
    cr_expect_eq(st->frames[0].line, inline_line);
    cr_expect_str_eq(st->frames[1].function, "sym_test_outer");
    cr_expect(!st->frames[1].inlined);
    cr_expect_eq(st->frames[1].line, inline_call_line);
    cr_expect_eq(st->frames[0].addr, st->frames[1].addr);
    cli_symbolizer_free(s);
    cli_profile_free(&p);
}

Test(cli_symbolize, payload_frames_are_dropped_and_deleted_modules_named)
{
    uint64_t caller = sym_test_caller();
    uint64_t pcs[] = { 0x10010, 0x10020, caller, 0x20010 };
    struct cli_profile p;
    one_stack(&p, pcs, 4,
              "00010000-00011000 r-xp 00000000 08:01 4242 /usr/local/lib/heapinject/libheapinject.so\n"
              "00020000-00021000 r-xp 00003000 08:01 999 /nonexistent/libgone.so (deleted)\n");
    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    struct cli_stack *st = &p.stacks[0];
    cr_assert_eq(st->npcs, 2, "heapinject's PCs must be gone");
    cr_expect_eq(st->pcs[0], caller);
    cr_assert_eq(st->nframes, 2);
    cr_expect_str_eq(st->frames[0].function, "sym_test_caller");
    cr_expect_null(st->frames[1].function);
    cr_expect_str_eq(st->frames[1].module, "/nonexistent/libgone.so (deleted)");
    cr_expect_eq(st->frames[1].addr, 0x20010);
    cr_expect_eq(st->frames[1].module_offset, 0x3010);
    const char *first;
    cr_expect_eq(cli_symbolizer_unreadable(s, &first), 1);
    cr_expect_str_eq(first, "/nonexistent/libgone.so (deleted)");
    cli_symbolizer_free(s);
    cli_profile_free(&p);
}

Test(cli_symbolize, unknown_addresses_keep_their_value)
{
    uint64_t pcs[] = { 0xdead0000beefull, 0 };
    struct cli_profile p;
    one_stack(&p, pcs, 2, NULL);
    struct cli_symbolizer *s = cli_symbolizer_new(0, -1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    cr_assert_eq(p.stacks[0].nframes, 2);
    cr_expect_eq(p.stacks[0].frames[0].addr, 0xdead0000beefull);
    cr_expect_null(p.stacks[0].frames[0].function);
    cr_expect_null(p.stacks[0].frames[0].module);
    cli_symbolizer_free(s);
    cli_profile_free(&p);
}

Test(cli_symbolize, payload_names_are_recognized)
{
    cr_expect(cli_symbolize_is_payload("/usr/lib/heapinject/libheapinject.so"));
    cr_expect(cli_symbolize_is_payload("libheapinject.so"));
    cr_expect(cli_symbolize_is_payload("/memfd:libheapinject.so (deleted)"));
    cr_expect(!cli_symbolize_is_payload("/usr/lib/libheapinject.so.bak"));
    cr_expect(!cli_symbolize_is_payload("/usr/lib/libfoo.so"));
    cr_expect(!cli_symbolize_is_payload(NULL));
}

Test(cli_demangle, cxx_names_become_readable)
{
    char *d = cli_demangle("_ZN7session6bufferEm");
    cr_expect_str_eq(d, "session::buffer(unsigned long)");
    free(d);
    d = cli_demangle("leak_session_buffer");
    cr_expect_str_eq(d, "leak_session_buffer");
    free(d);
    d = cli_demangle("_Znot_a_valid_name");
    cr_expect_str_eq(d, "_Znot_a_valid_name");
    free(d);
    cr_expect_null(cli_demangle(NULL));
}
