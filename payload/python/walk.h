/* walk.h - a thread's Python frames read through a checked reader, and a
 * code object's names and lines (issue 29 item 1; docs/DESIGN-NOTES.md,
 * "Python frames in samples").
 *
 * Nothing here calls Python or takes a lock: every word comes through
 * pl_py_reader.read, which fails rather than faults (the payload's reader
 * asks the kernel first, as the native walk does; a test's reader uses
 * process_vm_readv on another process). A chain that does not validate
 * (a code object whose type is not `code`, a position outside its code)
 * is refused whole, never cut to a guess. A chain deeper than the bound
 * keeps its innermost frames, each checked, and the last one kept says
 * cut (issue 29: a recursion 500 deep was dropped whole). */
#ifndef HI_PAYLOAD_PYTHON_WALK_H
#define HI_PAYLOAD_PYTHON_WALK_H

#include <stddef.h>
#include <stdint.h>

#include "payload/python/offsets.h"

struct pl_py_reader {
    /* 0 when len bytes at addr were copied to out, -1 otherwise. */
    int (*read)(void *ctx, uintptr_t addr, void *out, size_t len);
    void *ctx;
};

/* The interpreter's types, by address in the process read. */
struct pl_py_types {
    uintptr_t code, str;
};

struct pl_py_frame {
    uintptr_t code;   /* the code object */
    uint32_t instr;   /* the position, in 2-byte code units from its start */
    uint8_t entry;    /* the outermost frame its C activation of the eval loop runs */
    uint8_t cut;      /* the last frame kept: its callers lay past the bound */
};

#define PL_PY_NOT_VALID (-1) /* the chain did not validate */

/* The frames of the thread whose PyThreadState is at tstate, innermost
 * first, at most max (the last one's cut set when there were more): their
 * count (0: none), or PL_PY_NOT_VALID. */
int pl_py_walk(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
               uintptr_t tstate, struct pl_py_frame *out, unsigned max);

/* A code object's qualname (function's name before 3.11) and file name,
 * NUL-terminated and cut to their buffers; a name that is not an ASCII
 * str is "?". Its first line. 0, or -1 when the code cannot be read. */
int pl_py_code_names(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
                     uintptr_t code, char *name, size_t name_len, char *file, size_t file_len, uint32_t *firstlineno);

/* A code object's line table copied into buf: its length, or -1 (not
 * read, or longer than len: a part would give wrong lines). */
long pl_py_code_linetable(const struct pl_py_offsets *o, const struct pl_py_reader *r, uintptr_t code, uint8_t *buf,
                          size_t len);

/* The line of the instruction at `instr` (code units) from a line table of
 * the version's format: the line, or 0 when the table gives none. */
uint32_t pl_py_line(enum pl_py_lines fmt, const uint8_t *table, size_t len, uint32_t firstlineno, uint32_t instr);

#endif /* HI_PAYLOAD_PYTHON_WALK_H */
