/* cli_symbolize_demangle.c - C++ and Rust (legacy and v0) names as people read them. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "cli/symbolize/demangle.h"

static void expect_demangled(const char *mangled, const char *want)
{
    char *d = cli_demangle(mangled);
    cr_assert_not_null(d);
    cr_expect_str_eq(d, want, "%s", mangled);
    free(d);
}

Test(demangle, cxx_names)
{
    expect_demangled("_ZN5cache5Store8rememberEm", "cache::Store::remember(unsigned long)");
    expect_demangled("_Znwm", "operator new(unsigned long)");
}

Test(demangle, plain_c_names_unchanged)
{
    expect_demangled("leak_session_buffer", "leak_session_buffer");
    expect_demangled("_ZN", "_ZN"); /* truncated: left alone */
}

Test(demangle, rust_legacy_hash_removed)
{
    expect_demangled("_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write");
    expect_demangled("_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$7reserve21do_reserve_and_handle17hfedcba9876543210E",
                     "alloc::raw_vec::RawVec<T,A>::reserve::do_reserve_and_handle");
}

Test(demangle, rust_legacy_escapes)
{
    /* real hashes: libiberty takes "h" + 16 hex digits for a hash only
     * when they use at least 5 different digits */
    expect_demangled("_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h9c6ad7f7bc6d1b24E",
                     "std::rt::lang_start::{{closure}}");
    expect_demangled("_ZN61_$LT$myapp..cache..Cache$u20$as$u20$core..ops..drop..Drop$GT$4drop17h3e2f71a0c4b5d869E",
                     "<myapp::cache::Cache as core::ops::drop::Drop>::drop");
}

Test(demangle, rust_shaped_but_broken_left_alone)
{
    /* length runs past the end: not decoded, falls back to C++ rules or stays */
    char *d = cli_demangle("_ZN99core17h0123456789abcdefE");
    cr_assert_not_null(d);
    cr_expect_str_neq(d, "core");
    free(d);
}

Test(demangle, rust_v0_paths)
{
    expect_demangled("_RNvNtCsjrHSEGnQ3l9_3std2rt19lang_start_internal", "std::rt::lang_start_internal");
    expect_demangled("_RNvCs15kBYyAo9fc_7mycrate4main", "mycrate::main");
    expect_demangled("_RNCNvCs15kBYyAo9fc_7mycrate4main0", "mycrate::main::{closure#0}");
}

Test(demangle, rust_v0_generics_and_impls)
{
    /* what the old hand-written decoder left mangled (issue 13) */
    expect_demangled("_RINvNtC3std3mem8align_ofjEB2_", "std::mem::align_of::<usize>");
    expect_demangled("_RNvMNtCs1234_5alloc5allocNtB2_6Global18alloc_impl_runtime",
                     "<alloc::alloc::Global>::alloc_impl_runtime");
}

Test(demangle, c_names_that_look_mangled_stay)
{
    expect_demangled("_Rmalformed", "_Rmalformed");
    expect_demangled("_Zfoo", "_Zfoo");
}
