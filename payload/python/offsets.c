/* offsets.c - CPython's frame and code layouts by version (offsets.h). */
#include "payload/python/offsets.h"

#include <string.h>

/* 3.8 to 3.12, x86-64 and aarch64 (LP64), default build. */
static const struct pl_py_offsets table[] = {
    { .minor = 8, .chain = PL_PY_CHAIN_FRAMEOBJECT, .instr = PL_PY_INSTR_LASTI_BYTES, .lines = PL_PY_LINES_LNOTAB,
      .ts_interp = 16, .ts_frame = 24, .fr_back = 24, .fr_code = 32, .fr_instr = 104, .fr_owner = -1,
      .fr_is_entry = -1, .co_filename = 104, .co_name = 112, .co_firstlineno = 40, .co_lines = 120, .co_code = 48,
      .ascii_data = 48 },
    { .minor = 9, .chain = PL_PY_CHAIN_FRAMEOBJECT, .instr = PL_PY_INSTR_LASTI_BYTES, .lines = PL_PY_LINES_LNOTAB,
      .ts_interp = 16, .ts_frame = 24, .fr_back = 24, .fr_code = 32, .fr_instr = 104, .fr_owner = -1,
      .fr_is_entry = -1, .co_filename = 104, .co_name = 112, .co_firstlineno = 40, .co_lines = 120, .co_code = 48,
      .ascii_data = 48 },
    { .minor = 10, .chain = PL_PY_CHAIN_FRAMEOBJECT, .instr = PL_PY_INSTR_LASTI_UNITS, .lines = PL_PY_LINES_310,
      .ts_interp = 16, .ts_frame = 24, .fr_back = 24, .fr_code = 32, .fr_instr = 96, .fr_owner = -1,
      .fr_is_entry = -1, .co_filename = 104, .co_name = 112, .co_firstlineno = 40, .co_lines = 120, .co_code = 48,
      .ascii_data = 48 },
    { .minor = 11, .chain = PL_PY_CHAIN_CFRAME, .instr = PL_PY_INSTR_POINTER, .lines = PL_PY_LINES_LOCATIONS,
      .ts_interp = 16, .ts_frame = 56, .cframe_current = 8, .fr_back = 48, .fr_code = 32, .fr_instr = 56,
      .fr_owner = 69, .fr_is_entry = 68, .co_filename = 112, .co_name = 128, .co_firstlineno = 72, .co_lines = 136,
      .co_code = 184, .ascii_data = 48 },
    { .minor = 12, .chain = PL_PY_CHAIN_CFRAME, .instr = PL_PY_INSTR_POINTER, .lines = PL_PY_LINES_LOCATIONS,
      .ts_interp = 16, .ts_frame = 56, .cframe_current = 0, .fr_back = 8, .fr_code = 0, .fr_instr = 56,
      .fr_owner = 70, .fr_is_entry = -1, .co_filename = 112, .co_name = 128, .co_firstlineno = 68, .co_lines = 136,
      .co_code = 192, .ascii_data = 40 },
};

int pl_py_offsets_table(unsigned minor, struct pl_py_offsets *o, const char **why)
{
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        if (table[i].minor == minor) {
            *o = table[i];
            return 0;
        }
    *why = minor == 13 ? "3.13: its offsets come from _PyRuntime.debug_offsets"
                       : "this Python version is not supported (3.8 to 3.13 are)";
    return -1;
}

/* The head of 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h):
 * every field a uint64_t, groups in this order, each led by its struct's
 * size. Only the groups up to the one read here are spelled out. */
struct py313_debug {
    char cookie[8];
    uint64_t version, free_threaded;
    uint64_t runtime_state[3];      /* size, finalizing, interpreters_head */
    uint64_t interpreter_state[13]; /* size, id, next, threads_head, gc, ... */
    struct {
        uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id, datastack_chunk, status;
    } thread_state;
    struct {
        uint64_t size, previous, executable, instr_ptr, localsplus, owner;
    } frame;
    struct {
        uint64_t size, filename, name, qualname, linetable, firstlineno, argcount, localsplusnames, localspluskinds,
            co_code_adaptive;
    } code;
    uint64_t pyobject[2], type_object[4], tuple_object[3], list_object[3], dict_object[3], float_object[2],
        long_object[3], bytes_object[3];
    struct {
        uint64_t size, state, length, asciiobject_size;
    } unicode;
};

/* An offset inside a struct of `size` bytes that leaves room for `width`. */
static int inside(uint64_t off, uint64_t width, uint64_t size)
{
    return size <= 4096 && off + width <= size;
}

int pl_py_offsets_debug(const void *debug, size_t len, struct pl_py_offsets *o, const char **why)
{
    struct py313_debug d;
    if (len < sizeof(d)) {
        *why = "_PyRuntime is too short to hold its debug offsets";
        return -1;
    }
    memcpy(&d, debug, sizeof(d));
    if (memcmp(d.cookie, "xdebugpy", 8) != 0) {
        *why = "_PyRuntime does not start with the debug offsets' cookie";
        return -1;
    }
    if ((d.version >> 16) != 0x030d) {
        *why = "_PyRuntime's debug offsets are of another version than 3.13";
        return -1;
    }
    if (d.free_threaded) {
        *why = "a free-threaded build (its frames are not read)";
        return -1;
    }
    const uint64_t ts = d.thread_state.size, fr = d.frame.size, co = d.code.size;
    if (!inside(d.thread_state.interp, 8, ts) || !inside(d.thread_state.current_frame, 8, ts) ||
        !inside(d.frame.previous, 8, fr) || !inside(d.frame.executable, 8, fr) || !inside(d.frame.instr_ptr, 8, fr) ||
        !inside(d.frame.owner, 1, fr) || !inside(d.code.filename, 8, co) || !inside(d.code.qualname, 8, co) ||
        !inside(d.code.firstlineno, 4, co) || !inside(d.code.linetable, 8, co) || !inside(d.code.co_code_adaptive, 0, co) ||
        d.unicode.asciiobject_size == 0 || d.unicode.asciiobject_size > 256) {
        *why = "_PyRuntime's debug offsets are out of range";
        return -1;
    }
    *o = (struct pl_py_offsets){
        .minor = 13,
        .chain = PL_PY_CHAIN_CURRENT_FRAME,
        .instr = PL_PY_INSTR_POINTER,
        .lines = PL_PY_LINES_LOCATIONS,
        .ts_interp = (uint32_t)d.thread_state.interp,
        .ts_frame = (uint32_t)d.thread_state.current_frame,
        .fr_back = (uint32_t)d.frame.previous,
        .fr_code = (uint32_t)d.frame.executable,
        .fr_instr = (uint32_t)d.frame.instr_ptr,
        .fr_owner = (int32_t)d.frame.owner,
        .fr_is_entry = -1,
        .co_filename = (uint32_t)d.code.filename,
        .co_name = (uint32_t)d.code.qualname,
        .co_firstlineno = (uint32_t)d.code.firstlineno,
        .co_lines = (uint32_t)d.code.linetable,
        .co_code = (uint32_t)d.code.co_code_adaptive,
        .ascii_data = (uint32_t)d.unicode.asciiobject_size,
    };
    return 0;
}
