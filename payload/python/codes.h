/* codes.h - the code objects seen in samples, named at first sight, so
 * that a function gone before the snapshot is still named (issue 29 item
 * 1; docs/DESIGN-NOTES.md, "Python frames in samples").
 *
 * A reference cannot be taken without the GIL, so names are copied
 * instead: at a code object's first sample its qualname, file name, first
 * line and line table (when it fits in PL_PY_LINETABLE bytes) go into a fixed table
 * (one mmap, made by the agent thread). An entry is keyed by the code's
 * address and checked by its name and file objects and first line, so an
 * address reused by another code object gets an entry of its own. Hooks
 * insert concurrently without a lock: a slot is claimed by compare and
 * swap and published when filled; a slot being filled, or a full table,
 * is a miss the caller counts. The table lives for a session: mapped at
 * its start, unmapped when its agent has exited. */
#ifndef HI_PAYLOAD_PYTHON_CODES_H
#define HI_PAYLOAD_PYTHON_CODES_H

#include "payload/python/walk.h"

#define PL_PY_CODES 4096u       /* entries (power of two): 5.4 MB of address space, touched as filled */
#define PL_PY_LINETABLE 1024u   /* bytes of a line table kept */
#define PL_PY_NAME 96u
#define PL_PY_FILE 160u

struct pl_py_code {
    uintptr_t code;             /* 0: free; PL_PY_CODE_BUSY: being filled */
    uintptr_t name_obj, file_obj;
    uint32_t firstlineno;
    uint32_t table_len;         /* bytes of table kept */
    uint8_t table_cut;          /* 1: the table was longer than PL_PY_LINETABLE */
    char name[PL_PY_NAME], file[PL_PY_FILE];
    uint8_t table[PL_PY_LINETABLE];
};

struct pl_py_codes {
    struct pl_py_code *slots;   /* PL_PY_CODES of them, or NULL */
};

/* Agent thread: maps the table. 0, or -1. */
int pl_py_codes_init(struct pl_py_codes *c);

/* Agent thread, no hook inside (sample.c waits for them): unmaps the
 * table; slots becomes NULL. */
void pl_py_codes_release(struct pl_py_codes *c);

/* Hook: the entry of the code object at code (read through r), made at
 * its first sight: its index + 1, or 0 (a miss). */
uint32_t pl_py_codes_get(struct pl_py_codes *c, const struct pl_py_offsets *o, const struct pl_py_types *t,
                         const struct pl_py_reader *r, uintptr_t code);

/* The entry id names (from pl_py_codes_get), NULL for an id not filled.
 * Its lines: pl_py_line on its table (table_len 0: the table was longer
 * than PL_PY_LINETABLE, lines unknown, 0). */
const struct pl_py_code *pl_py_codes_entry(const struct pl_py_codes *c, uint32_t id);

#endif /* HI_PAYLOAD_PYTHON_CODES_H */
