/* walk.c - Python frames, names and lines through a checked reader (walk.h). */
#include "payload/python/walk.h"

#include <string.h>

/* Every object of a default (not debug) LP64 build: the type after the
 * reference count, a variable object's size after the type, a bytes
 * object's characters after its size and hash. */
#define OB_TYPE 8u
#define OB_SIZE 16u
#define BYTES_DATA 32u
/* _PyInterpreterFrame.owner (3.11+): a frame the C stack owns (3.12+: the
 * shim the eval loop pushes at each entry) runs no code of the script. */
#define OWNED_BY_CSTACK 3u
/* Code objects this large are not real (co_code is bounded by memory, but a
 * position past 16 M code units is a wrong read, not a program). */
#define MAX_CODE_UNITS (16u << 20)

static int word(const struct pl_py_reader *r, uintptr_t addr, uintptr_t *out)
{
    if (addr < 4096 || (addr & 7))
        return -1;
    return r->read(r->ctx, addr, out, sizeof(*out));
}

/* The code object at code, checked by its type; its size in code units. */
static int code_units(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
                      uintptr_t code, uint32_t *units)
{
    uintptr_t type, size;
    if (word(r, code + OB_TYPE, &type) < 0 || type != t->code)
        return -1;
    if (o->instr == PL_PY_INSTR_POINTER) {
        if (word(r, code + OB_SIZE, &size) < 0)
            return -1;
    } else {
        uintptr_t bytes;
        if (word(r, code + o->co_code, &bytes) < 0 || word(r, bytes + OB_SIZE, &size) < 0)
            return -1;
        size /= 2;
    }
    if (size == 0 || size > MAX_CODE_UNITS)
        return -1;
    *units = (uint32_t)size;
    return 0;
}

/* Before 3.11: PyFrameObject, one per activation of the eval loop. */
static int walk_frameobjects(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
                             uintptr_t f, struct pl_py_frame *out, unsigned max)
{
    unsigned n = 0;
    for (; f; n++) {
        uintptr_t code, back;
        int32_t lasti;
        uint32_t units;
        if (n == max) { /* deeper than kept: the innermost are */
            if (n)
                out[n - 1].cut = 1;
            break;
        }
        if (word(r, f + o->fr_code, &code) < 0 || code_units(o, t, r, code, &units) < 0 ||
            r->read(r->ctx, f + o->fr_instr, &lasti, sizeof(lasti)) < 0 || word(r, f + o->fr_back, &back) < 0)
            return PL_PY_NOT_VALID;
        /* -1: not started yet. 3.8-3.9 count bytes, 3.10 code units. */
        uint32_t instr = lasti < 0 ? 0 : o->instr == PL_PY_INSTR_LASTI_BYTES ? (uint32_t)lasti / 2 : (uint32_t)lasti;
        if (instr >= units)
            return PL_PY_NOT_VALID;
        out[n] = (struct pl_py_frame){ .code = code, .instr = instr, .entry = 1 };
        f = back;
    }
    return (int)n;
}

/* 3.11+: _PyInterpreterFrame, several per activation. */
static int walk_interpreter_frames(const struct pl_py_offsets *o, const struct pl_py_types *t,
                                   const struct pl_py_reader *r, uintptr_t f, struct pl_py_frame *out, unsigned max)
{
    unsigned n = 0;
    /* Links include the shims (one per entry, so at most one per frame):
     * past twice the frames kept, the rest is cut as a deeper chain is. */
    for (unsigned links = 0; f; links++) {
        uintptr_t back, code, ip;
        uint8_t owner, entry = 0;
        if (links >= 2 * max) {
            if (n)
                out[n - 1].cut = 1;
            break;
        }
        if (word(r, f + o->fr_back, &back) < 0 || r->read(r->ctx, f + (uint32_t)o->fr_owner, &owner, 1) < 0)
            return PL_PY_NOT_VALID;
        if (owner == OWNED_BY_CSTACK && o->minor >= 12) {
            if (n)
                out[n - 1].entry = 1;
            f = back;
            continue;
        }
        if (n == max) { /* a frame past the bound: the innermost are kept */
            out[n - 1].cut = 1;
            break;
        }
        if (o->fr_is_entry >= 0 && r->read(r->ctx, f + (uint32_t)o->fr_is_entry, &entry, 1) < 0)
            return PL_PY_NOT_VALID;
        uint32_t units;
        if (word(r, f + o->fr_code, &code) < 0 || code_units(o, t, r, code, &units) < 0 ||
            word(r, f + o->fr_instr, &ip) < 0)
            return PL_PY_NOT_VALID;
        /* 3.11-3.12 keep the last instruction run (one before the first
         * before any ran), 3.13 the one running: both within the code. */
        uintptr_t first = code + o->co_code;
        if (ip + 2 < first || (ip & 1) != (first & 1))
            return PL_PY_NOT_VALID;
        uint32_t instr = ip < first ? 0 : (uint32_t)((ip - first) / 2);
        if (ip >= first && (ip - first) / 2 >= units)
            return PL_PY_NOT_VALID;
        out[n++] = (struct pl_py_frame){ .code = code, .instr = instr, .entry = entry != 0 };
        f = back;
    }
    if (n && !out[n - 1].cut)
        out[n - 1].entry = 1;
    return (int)n;
}

int pl_py_walk(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
               uintptr_t tstate, struct pl_py_frame *out, unsigned max)
{
    uintptr_t f;
    if (max == 0)
        return 0;
    if (word(r, tstate + o->ts_frame, &f) < 0)
        return PL_PY_NOT_VALID;
    if (o->chain == PL_PY_CHAIN_CFRAME && f && word(r, f + o->cframe_current, &f) < 0)
        return PL_PY_NOT_VALID;
    if (o->chain == PL_PY_CHAIN_FRAMEOBJECT)
        return walk_frameobjects(o, t, r, f, out, max);
    return walk_interpreter_frames(o, t, r, f, out, max);
}

/* A compact ASCII str's characters into buf (NUL-terminated, cut). */
static int ascii_str(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
                     uintptr_t s, char *buf, size_t len)
{
    uintptr_t type, length;
    uint32_t state;
    if (len == 0)
        return -1;
    buf[0] = '\0';
    if (word(r, s + OB_TYPE, &type) < 0 || type != t->str || word(r, s + 16, &length) < 0 ||
        r->read(r->ctx, s + 32, &state, sizeof(state)) < 0)
        return -1;
    /* state: interned:2, kind:3, compact:1, ascii:1 (3.8 to 3.13) */
    if (!((state >> 5) & 1) || !((state >> 6) & 1)) {
        strncpy(buf, "?", len);
        return 0;
    }
    size_t n = length < len - 1 ? (size_t)length : len - 1;
    if (n && r->read(r->ctx, s + o->ascii_data, buf, n) < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

int pl_py_code_names(const struct pl_py_offsets *o, const struct pl_py_types *t, const struct pl_py_reader *r,
                     uintptr_t code, char *name, size_t name_len, char *file, size_t file_len, uint32_t *firstlineno)
{
    uintptr_t type, qn, fn;
    int32_t first;
    if (word(r, code + OB_TYPE, &type) < 0 || type != t->code || word(r, code + o->co_name, &qn) < 0 ||
        word(r, code + o->co_filename, &fn) < 0 ||
        r->read(r->ctx, code + o->co_firstlineno, &first, sizeof(first)) < 0 || first < 0)
        return -1;
    if (ascii_str(o, t, r, qn, name, name_len) < 0 || ascii_str(o, t, r, fn, file, file_len) < 0)
        return -1;
    *firstlineno = (uint32_t)first;
    return 0;
}

long pl_py_code_linetable(const struct pl_py_offsets *o, const struct pl_py_reader *r, uintptr_t code, uint8_t *buf,
                          size_t len)
{
    uintptr_t bytes, size;
    if (word(r, code + o->co_lines, &bytes) < 0 || word(r, bytes + OB_SIZE, &size) < 0)
        return -1;
    if (size > len)
        return -1; /* a part of a table would give wrong lines (3.8-3.9's) */
    size_t n = (size_t)size;
    if (n && r->read(r->ctx, bytes + BYTES_DATA, buf, n) < 0)
        return -1;
    return (long)n;
}
