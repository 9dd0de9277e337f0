/* cli_symbolize.c - the libdw symbolizer on this test's own process:
 * function names, file:line, inlined frames (nested ones too), heapinject's
 * frames dropped, deleted modules named as such; its indexes answer like
 * the libdwfl/libdw lookups they replace; and C++ demangling. */
#include <criterion/criterion.h>
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/symbolize/demangle.h"
#include "cli/symbolize/symbolize.h"
#include "cli/symbolize/scopes.h"
#include "cli/symbolize/symtab.h"

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

static int nest_inner_line, nest_mid_line, nest_outer_line;

static inline __attribute__((always_inline)) uint64_t sym_test_nest_inner(void)
{
    uint64_t r = return_address(); nest_inner_line = __LINE__;
    return r;
}

static inline __attribute__((always_inline)) uint64_t sym_test_nest_mid(void)
{
    uint64_t r = sym_test_nest_inner(); nest_mid_line = __LINE__;
    __asm__ volatile("" ::: "memory");
    return r;
}

__attribute__((noinline)) uint64_t sym_test_nest_outer(void)
{
    uint64_t r = sym_test_nest_mid(); nest_outer_line = __LINE__;
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

Test(cli_symbolize, nested_inlined_calls_each_get_a_frame_at_their_call_site)
{
    uint64_t pc = sym_test_nest_outer();
    struct cli_profile p;
    one_stack(&p, &pc, 1, NULL);
    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    struct cli_stack *st = &p.stacks[0];
    cr_assert_eq(st->nframes, 3);
    cr_expect_str_eq(st->frames[0].function, "sym_test_nest_inner");
    cr_expect(st->frames[0].inlined);
    cr_expect_eq(st->frames[0].line, nest_inner_line);
    cr_expect_str_eq(st->frames[1].function, "sym_test_nest_mid");
    cr_expect(st->frames[1].inlined);
    cr_expect_eq(st->frames[1].line, nest_mid_line);
    cr_expect_str_eq(st->frames[2].function, "sym_test_nest_outer");
    cr_expect(!st->frames[2].inlined);
    cr_expect_eq(st->frames[2].line, nest_outer_line, "the physical frame is at the outermost call site");
    cli_symbolizer_free(s);
    cli_profile_free(&p);
}

/* ---- the indexes against the lookups they replace ------------------------ */

static char *debuginfo_path;
static const Dwfl_Callbacks self_callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .debuginfo_path = &debuginfo_path,
};

static Dwfl *self_dwfl(void)
{
    Dwfl *d = dwfl_begin(&self_callbacks);
    cr_assert_not_null(d);
    cr_assert_eq(dwfl_linux_proc_report(d, getpid()), 0);
    cr_assert_eq(dwfl_report_end(d, NULL, NULL), 0);
    return d;
}

/* The executable range of a module (its first executable segment). */
static bool text_range(Dwfl_Module *mod, GElf_Addr *lo, GElf_Addr *hi)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t n;
    if (!elf || elf_getphdrnum(elf, &n) != 0)
        return false;
    for (size_t i = 0; i < n; i++) {
        GElf_Phdr ph;
        if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
            *lo = ph.p_vaddr + bias;
            *hi = *lo + ph.p_memsz;
            return true;
        }
    }
    return false;
}

static void check_symtab(Dwfl_Module *mod, const char *what)
{
    GElf_Addr lo, hi;
    cr_assert(text_range(mod, &lo, &hi), "%s: no text", what);
    struct cli_symtab *t = cli_symtab_new(mod);
    cr_assert_not_null(t);
    size_t checked = 0, named = 0, bad = 0;
    /* Addresses spread over the text, and around every symbol's start and
     * end, where the rules (sizes, labels, aliases, bindings) bite. */
    GElf_Addr step = (hi - lo) / 3000 + 1;
    for (GElf_Addr a = lo; a < hi; a += step) {
        GElf_Off off;
        GElf_Sym sym;
        const char *want = dwfl_module_addrinfo(mod, a, &off, &sym, NULL, NULL, NULL);
        const char *got = cli_symtab_lookup(t, a);
        checked++;
        named += want != NULL;
        if ((want == NULL) != (got == NULL) || (want && strcmp(want, got))) {
            if (bad++ < 5)
                cr_log_error("%s: 0x%lx: libdwfl %s, index %s", what, (unsigned long)(a - lo), want ? want : "(none)",
                             got ? got : "(none)");
        }
    }
    int n = dwfl_module_getsymtab(mod);
    for (int i = 1; i < n && i < 4000; i++) {
        GElf_Sym sym;
        GElf_Addr v;
        if (!dwfl_module_getsym_info(mod, i, &sym, &v, NULL, NULL, NULL) || v < lo || v >= hi)
            continue;
        GElf_Addr probes[] = { v - 1, v, v + 1, v + sym.st_size - 1, v + sym.st_size, v + sym.st_size + 1 };
        for (size_t k = 0; k < sizeof(probes) / sizeof(probes[0]); k++) {
            GElf_Off off;
            GElf_Sym s2;
            const char *want = dwfl_module_addrinfo(mod, probes[k], &off, &s2, NULL, NULL, NULL);
            const char *got = cli_symtab_lookup(t, probes[k]);
            checked++;
            if ((want == NULL) != (got == NULL) || (want && strcmp(want, got))) {
                if (bad++ < 5)
                    cr_log_error("%s: 0x%lx: libdwfl %s, index %s", what, (unsigned long)(probes[k] - lo),
                                 want ? want : "(none)", got ? got : "(none)");
            }
        }
    }
    cr_expect_eq(bad, 0, "%s: %zu of %zu addresses named differently", what, bad, checked);
    cr_expect_gt(named, checked / 10, "%s: the test must look at named code", what);
    cli_symtab_free(t);
}

Test(cli_symbolize, symbol_index_names_like_dwfl_module_addrinfo)
{
    Dwfl *d = self_dwfl();
    Dwfl_Module *self = dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&sym_test_caller);
    Dwfl_Module *libc = dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&getpid);
    cr_assert_not_null(self);
    cr_assert_not_null(libc);
    check_symtab(self, "test executable");
    check_symtab(libc, "libc");
    dwfl_end(d);
}

Test(cli_symbolize, scope_index_nests_like_dwarf_getscopes)
{
    Dwfl *d = self_dwfl();
    Dwfl_Module *mod = dwfl_addrmodule(d, (Dwarf_Addr)(uintptr_t)&sym_test_caller);
    cr_assert_not_null(mod);
    GElf_Addr lo, hi;
    cr_assert(text_range(mod, &lo, &hi));
    struct cli_scopes *sc = cli_scopes_new();
    cr_assert_not_null(sc);
    size_t checked = 0, inlined = 0, bad = 0;
    GElf_Addr step = (hi - lo) / 4000 + 1;
    for (GElf_Addr a = lo; a < hi; a += step) {
        Dwarf_Addr bias;
        Dwarf_Die *cu = dwfl_module_addrdie(mod, a, &bias);
        if (!cu)
            continue;
        Dwarf_Die *want = NULL;
        int nw = dwarf_getscopes(cu, a - bias, &want);
        const Dwarf_Die *got[256];
        int ng = cli_scopes_find(sc, cu, a - bias, got, 256);
        cr_assert_geq(ng, 0);
        /* dwarf_getscopes agrees with the concrete nesting up to the
         * innermost inlined call (then it switches to the abstract
         * definition's scopes); without one, all but its trailing CU. */
        int upto = nw > 0 ? nw - 1 : 0;
        bool has_inline = false;
        for (int i = 0; i < nw; i++)
            if (dwarf_tag(&want[i]) == DW_TAG_inlined_subroutine) {
                upto = i + 1;
                has_inline = true;
                break;
            }
        bool same = has_inline ? ng >= upto : ng == upto;
        for (int i = 0; same && i < upto; i++)
            same = got[i]->addr == want[i].addr;
        checked++;
        inlined += has_inline;
        if (!same && bad++ < 5)
            cr_log_error("0x%lx: dwarf_getscopes %d scopes, index %d", (unsigned long)(a - lo), nw, ng);
        free(want);
    }
    cr_expect_eq(bad, 0, "%zu of %zu addresses nest differently", bad, checked);
    cr_expect_gt(inlined, 0, "the test must look at inlined code");
    cli_scopes_free(sc);
    dwfl_end(d);
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

Test(cli_symbolize, frames_share_interned_strings_that_outlive_the_symbolizer)
{
    /* Two stacks through the same PC: each distinct PC is symbolized once,
     * and the frames of both point at one copy of each string, owned by
     * the profile's pool (issue 17: 3 strdup per frame). */
    uint64_t pcs[2] = { sym_test_caller(), sym_test_outer() };
    struct cli_profile p;
    one_stack(&p, pcs, 2, NULL);
    struct cli_stack *two = realloc(p.stacks, 2 * sizeof(*two));
    cr_assert_not_null(two);
    p.stacks = two;
    memset(&p.stacks[1], 0, sizeof(p.stacks[1]));
    p.stacks[1].npcs = 1;
    p.stacks[1].pcs = malloc(sizeof(uint64_t));
    p.stacks[1].pcs[0] = pcs[0];
    p.nstacks = 2;
    struct cli_symbolizer *s = cli_symbolizer_new(getpid(), 1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    cr_assert_eq(p.stacks[0].nframes, 3); /* caller; inlined + outer */
    cr_assert_eq(p.stacks[1].nframes, 1);
    cr_expect(p.stacks[0].shared_strings && p.stacks[1].shared_strings);
    cr_expect_not_null(p.strings);
    const struct cli_frame *a = &p.stacks[0].frames[0], *b = &p.stacks[1].frames[0];
    cr_expect_str_eq(a->function, "sym_test_caller");
    cr_expect_eq(a->function, b->function, "one PC, two copies of its function name");
    cr_expect_eq(a->module, b->module);
    cr_expect_eq(a->file, b->file);
    cr_expect_eq(a->module, p.stacks[0].frames[2].module, "one module, two copies of its name");
    cr_expect_eq(b->addr, pcs[0]);
    cr_expect_eq(p.stacks[0].frames[1].addr, pcs[1]);
    /* The symbolizer goes first: the profile's strings stay (ASan checks). */
    cli_symbolizer_free(s);
    cr_expect_str_eq(p.stacks[1].frames[0].function, "sym_test_caller");
    cr_expect_str_eq(base(p.stacks[0].frames[1].file), "cli_symbolize.c");
    /* A second symbolizer over the same profile: frames redone into its
     * pool, the first pool released once no stack points into it. */
    s = cli_symbolizer_new(getpid(), 1);
    cr_assert_eq(cli_symbolizer_run(s, &p), 0);
    cli_symbolizer_free(s);
    cr_expect_str_eq(p.stacks[0].frames[2].function, "sym_test_outer");
    cli_profile_free(&p);
}
