/* lines.c - an instruction's line from a code object's line table, in the
 * three formats CPython has used (walk.h: pl_py_line). Formats as
 * documented in CPython's Objects/lnotab_notes.txt and
 * InternalDocs/locations.md. */
#include "payload/python/walk.h"

/* 3.8-3.9 co_lnotab: (byte offset increment, signed line increment) pairs. */
static uint32_t line_lnotab(const uint8_t *p, size_t len, uint32_t first, uint32_t instr)
{
    uint32_t addr = 0, target = instr * 2;
    int64_t line = first;
    for (size_t i = 0; i + 1 < len; i += 2) {
        addr += p[i];
        if (addr > target)
            break;
        line += (int8_t)p[i + 1];
    }
    return line > 0 ? (uint32_t)line : 0;
}

/* 3.10 co_linetable: (byte length, signed line delta) pairs, -128: no line. */
static uint32_t line_310(const uint8_t *p, size_t len, uint32_t first, uint32_t instr)
{
    uint32_t end = 0, target = instr * 2;
    int64_t line = first;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int8_t delta = (int8_t)p[i + 1];
        if (delta != -128)
            line += delta;
        uint32_t start = end;
        end = start + p[i];
        if (target >= start && target < end)
            return delta == -128 || line <= 0 ? 0 : (uint32_t)line;
    }
    return 0;
}

/* 3.11+ varints: 6 bits a byte, 0x40 says more follow. */
static int varint(const uint8_t *p, size_t len, size_t *i, uint32_t *out)
{
    uint32_t v = 0;
    for (unsigned shift = 0; *i < len && shift < 32; shift += 6) {
        uint8_t b = p[(*i)++];
        v |= (uint32_t)(b & 63) << shift;
        if (!(b & 64)) {
            *out = v;
            return 0;
        }
    }
    return -1;
}

static int svarint(const uint8_t *p, size_t len, size_t *i, int64_t *out)
{
    uint32_t u;
    if (varint(p, len, i, &u) < 0)
        return -1;
    *out = (u & 1) ? -(int64_t)(u >> 1) : (int64_t)(u >> 1);
    return 0;
}

/* 3.11+ location table: entries of 1-8 code units, each led by a byte with
 * the top bit set, (code << 3) | (units - 1); code 15: no location, 14:
 * long form (line delta, end line, columns as varints), 13: line delta
 * only, 10-12: line delta code-10 and two column bytes, 0-9: same line and
 * one column byte. */
static uint32_t line_locations(const uint8_t *p, size_t len, uint32_t first, uint32_t instr)
{
    int64_t line = first;
    uint32_t addr = 0;
    size_t i = 0;
    while (i < len) {
        uint8_t b = p[i++];
        if (!(b & 0x80))
            return 0; /* not the start of an entry: a table we misread */
        unsigned code = (b >> 3) & 15, units = (b & 7) + 1;
        int has_line = 1;
        int64_t delta = 0;
        uint32_t skip;
        if (code == 15) {
            has_line = 0;
        } else if (code == 14) {
            if (svarint(p, len, &i, &delta) < 0 || varint(p, len, &i, &skip) < 0 || varint(p, len, &i, &skip) < 0 ||
                varint(p, len, &i, &skip) < 0)
                return 0;
        } else if (code == 13) {
            if (svarint(p, len, &i, &delta) < 0)
                return 0;
        } else if (code >= 10) {
            delta = code - 10;
            i += 2;
        } else {
            i += 1;
        }
        line += delta;
        if (instr >= addr && instr < addr + units)
            return has_line && line > 0 ? (uint32_t)line : 0;
        addr += units;
    }
    return 0;
}

uint32_t pl_py_line(enum pl_py_lines fmt, const uint8_t *table, size_t len, uint32_t firstlineno, uint32_t instr)
{
    switch (fmt) {
    case PL_PY_LINES_LNOTAB:
        return line_lnotab(table, len, firstlineno, instr);
    case PL_PY_LINES_310:
        return line_310(table, len, firstlineno, instr);
    case PL_PY_LINES_LOCATIONS:
        return line_locations(table, len, firstlineno, instr);
    }
    return 0;
}
