/* offsets.h - where CPython keeps a thread's frames and a code object's
 * names, by version (issue 29 item 1; docs/DESIGN-NOTES.md, "Python frames
 * in samples").
 *
 * 3.8 to 3.12 come from a table (offsets checked against each version's own
 * headers by tests/python_offsets/check.sh); 3.13 from the _Py_DebugOffsets
 * the runtime keeps at the start of _PyRuntime for out-of-process readers.
 * Only the default build of x86-64/aarch64 Linux: a free-threaded build, a
 * debug build (Py_TRACE_REFS moves every object's fields) or another
 * version gets no offsets and a reason. */
#ifndef HI_PAYLOAD_PYTHON_OFFSETS_H
#define HI_PAYLOAD_PYTHON_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

/* How a thread's frames are chained. */
enum pl_py_chain {
    PL_PY_CHAIN_FRAMEOBJECT = 1, /* 3.8-3.10: tstate->frame, PyFrameObject.f_back */
    PL_PY_CHAIN_CFRAME,          /* 3.11-3.12: tstate->cframe->current_frame, _PyInterpreterFrame.previous */
    PL_PY_CHAIN_CURRENT_FRAME,   /* 3.13: tstate->current_frame */
};

/* How a frame's position in its code is kept. */
enum pl_py_instr {
    PL_PY_INSTR_LASTI_BYTES = 1, /* 3.8-3.9: int f_lasti, a byte offset into co_code */
    PL_PY_INSTR_LASTI_UNITS,     /* 3.10: int f_lasti, in 2-byte code units */
    PL_PY_INSTR_POINTER,         /* 3.11+: a pointer into co_code_adaptive */
};

/* How a code object maps instructions to lines. */
enum pl_py_lines {
    PL_PY_LINES_LNOTAB = 1, /* 3.8-3.9: co_lnotab (bytes) */
    PL_PY_LINES_310,        /* 3.10: co_linetable (bytes), start/end deltas */
    PL_PY_LINES_LOCATIONS,  /* 3.11+: co_linetable, the location table */
};

struct pl_py_offsets {
    uint32_t minor;                 /* 3.minor */
    enum pl_py_chain chain;
    enum pl_py_instr instr;
    enum pl_py_lines lines;
    /* PyThreadState */
    uint32_t ts_interp, ts_frame;   /* ts_frame: frame, cframe or current_frame */
    uint32_t cframe_current;        /* _PyCFrame.current_frame (CHAIN_CFRAME) */
    /* the frame (PyFrameObject or _PyInterpreterFrame) */
    uint32_t fr_back, fr_code, fr_instr;
    int32_t fr_owner;               /* -1: none (before 3.11) */
    int32_t fr_is_entry;            /* -1: none (all but 3.11) */
    /* PyCodeObject */
    uint32_t co_filename, co_name;  /* co_name: co_qualname from 3.11 on */
    uint32_t co_firstlineno, co_lines;
    uint32_t co_code;               /* 3.8-3.10: the co_code bytes object; 3.11+: co_code_adaptive, inline */
    /* str: a compact ASCII string's characters follow sizeof(PyASCIIObject) */
    uint32_t ascii_data;
};

/* The table's offsets of 3.minor (8 to 12) into *o: 0, or -1 with *why. */
int pl_py_offsets_table(unsigned minor, struct pl_py_offsets *o, const char **why);

/* 3.13's offsets from the _Py_DebugOffsets at the start of _PyRuntime
 * (len bytes of it copied to debug): 0, or -1 with *why (not the cookie,
 * another version, a free-threaded build, a value out of range). */
int pl_py_offsets_debug(const void *debug, size_t len, struct pl_py_offsets *o, const char **why);

#endif /* HI_PAYLOAD_PYTHON_OFFSETS_H */
