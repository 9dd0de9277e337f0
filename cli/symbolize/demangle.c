/* demangle.c - C++ and Rust symbol names through libiberty's demangler.
 *
 * libiberty (binutils' and gcc's, packaged as libiberty-dev) is what
 * c++filt, gdb and addr2line use: the Itanium C++ ABI, Rust's legacy
 * scheme (Itanium-shaped, with a "h<16 hex>" hash, removed unless
 * DMGL_VERBOSE, and "$LT$"-style escapes) and Rust's v0 scheme (_R...:
 * generics, impls, closures, back references). With no style in the
 * options it runs in auto mode, which tries Rust's rules before C++'s
 * (legacy Rust names are valid C++ names too). It replaced a hand-written
 * decoder that left v0 names with generics or impls mangled (issue 13).
 * libiberty.a is linked statically: it has no shared build on Debian. */
#include "cli/symbolize/demangle.h"

#include <libiberty/demangle.h>
#include <stdlib.h>
#include <string.h>

char *cli_demangle(const char *name)
{
    if (!name)
        return NULL;
    /* Only names that look mangled are offered: a C name such as "main"
     * is never rewritten. */
    if (!strncmp(name, "_Z", 2) || !strncmp(name, "_R", 2)) {
        /* _R is only Rust's v0: say so rather than rely on the library's
         * global style being auto. _Z may be C++ or legacy Rust: auto. */
        int style = name[1] == 'R' ? DMGL_RUST : DMGL_AUTO;
        char *d = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI | style);
        if (d)
            return d;
    }
    return strdup(name);
}
