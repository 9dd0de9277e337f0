/* fold.c - folding inlined library frames for the text report (fold.h). */
#include "cli/report/fold.h"

#include <string.h>

static bool starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* Modules installed by the system: libc, libstdc++, libpython, ... */
static bool system_module(const char *m)
{
    return starts(m, "/usr/lib/") || starts(m, "/lib/") || starts(m, "/usr/lib64/") || starts(m, "/lib64/");
}

/* Sources of standard libraries and their headers, as compilers record them. */
static bool library_source(const char *f)
{
    return starts(f, "/usr/include/") || starts(f, "/usr/lib/") || /* gcc's own headers live there */
           starts(f, "/rustc/") || starts(f, "library/") ||      /* Rust's std, alloc, core */
           strstr(f, "/.cargo/registry/") || strstr(f, "/.rustup/toolchains/") ||
           strstr(f, "/go/src/runtime/") || starts(f, "/usr/share/go");
}

/* Language runtimes wherever they are installed (pyenv's libpython in
 * ~/.pyenv, a JDK under /opt): none of their code is the program's own. */
static bool runtime_module(const char *m)
{
    const char *base = strrchr(m, '/');
    base = base ? base + 1 : m;
    return starts(base, "libpython") || starts(base, "python") || starts(base, "libjvm.") ||
           starts(base, "libruby") || starts(base, "libperl") || starts(base, "libnode.");
}

bool cli_fold_is_library(const struct cli_frame *f)
{
    if (f->module && (system_module(f->module) || runtime_module(f->module)))
        return true;
    return f->file && library_source(f->file);
}

uint32_t cli_fold_lines(const struct cli_stack *s, struct cli_fold_line *lines, uint32_t max, uint32_t *rest)
{
    uint32_t n = 0, i = 0;
    while (i < s->nframes && n < max) {
        uint32_t j = i;
        /* An inlined library frame folds into the next frame when that one
         * is library code too: the run ends at the first frame that is
         * physical, or whose caller is the program's. */
        if (cli_fold_is_library(&s->frames[i]))
            while (j + 1 < s->nframes && s->frames[j].inlined && cli_fold_is_library(&s->frames[j + 1]))
                j++;
        lines[n++] = (struct cli_fold_line){ j, j - i };
        i = j + 1;
    }
    *rest = s->nframes - i;
    return n;
}
