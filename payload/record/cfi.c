/* cfi.c - per-return-address unwind rules from .eh_frame, cached.
 *
 * Formats: the Linux Standard Base (Core, "Exception Frames": .eh_frame,
 * .eh_frame_hdr, pointer encodings) and DWARF 4 section 6.4 (call frame
 * instructions). Only what x86-64 compilers and glibc's assembly emit is
 * interpreted; anything else makes the rule PL_CFI_OTHER.
 */
#include "payload/record/cfi.h"
#include "payload/record/cfi_hints.h"

#include <errno.h>
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "payload/sys/sys.h"

/* Two threads caching into the same line may overwrite each other's word:
 * that only costs a later miss. */
#define RA_BITS 47
#define RA_MASK PL_CFI_RA_MASK
#define OFF_MAX 1023u  /* cfa_off / 8 */
#define SLOT_MAX 31u

uint64_t *pl_cfi_cache;

int pl_cfi_init(void)
{
    if (pl_cfi_cache)
        return 0;
    uint64_t *c = pl_arena_map(sizeof(uint64_t) << PL_CFI_BITS);
    if (!c)
        return -ENOMEM;
    __atomic_store_n(&pl_cfi_cache, c, __ATOMIC_RELEASE);
    return 0;
}

void pl_cfi_flush(void)
{
    if (pl_cfi_cache)
        pl_arena_clear(pl_cfi_cache, sizeof(uint64_t) << PL_CFI_BITS);
}

/* ---- reading the sections (bounded: [p, end)) ---- */

struct rd {
    const uint8_t *p, *end;
    int bad;
};

static uint64_t rd_bytes(struct rd *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return 0;
    }
    uint64_t v = 0;
    memcpy(&v, r->p, n); /* little-endian */
    r->p += n;
    return v;
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64; shift += 7) {
        uint8_t b = (uint8_t)rd_bytes(r, 1);
        if (r->bad)
            return 0;
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    r->bad = 1;
    return 0;
}

static int64_t rd_sleb(struct rd *r)
{
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t b;
    do {
        b = (uint8_t)rd_bytes(r, 1);
        if (r->bad || shift >= 64) {
            r->bad = 1;
            return 0;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    } while (b & 0x80);
    if (shift < 64 && (b & 0x40))
        v |= ~0ull << shift;
    return (int64_t)v;
}

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* An encoded pointer; pcrel is relative to the field, datarel to `data`.
 * Indirect pointers are read as their slot address (only personality
 * routines use them, and those are skipped). */
static uint64_t rd_encoded(struct rd *r, uint8_t enc, uintptr_t data)
{
    uintptr_t field = (uintptr_t)r->p;
    uint64_t v;
    if (enc == DW_EH_PE_omit)
        return 0;
    switch (enc & 0x0f) {
    case 0x00: v = rd_bytes(r, 8); break;
    case 0x01: v = rd_uleb(r); break;
    case 0x02: v = rd_bytes(r, 2); break;
    case 0x03: v = rd_bytes(r, 4); break;
    case 0x04: v = rd_bytes(r, 8); break;
    case 0x09: v = (uint64_t)rd_sleb(r); break;
    case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_bytes(r, 2); break;
    case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_bytes(r, 4); break;
    case 0x0c: v = rd_bytes(r, 8); break;
    default: r->bad = 1; return 0;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case DW_EH_PE_pcrel: v += field; break;
    case DW_EH_PE_datarel: v += data; break;
    default: r->bad = 1; return 0;
    }
    return v;
}

/* ---- the CFA program ---- */

enum { HOW_SAME, HOW_OFFSET, HOW_UNDEF, HOW_OTHER };

#define REG_RBP 6
#define REG_RSP 7
#define REG_RA 16

struct cfa_state {
    int cfa_reg;      /* DWARF register, or -1 for an expression */
    int64_t cfa_off;
    int rbp_how, ra_how;
    int64_t rbp_off, ra_off; /* HOW_OFFSET: saved at CFA + off */
};

struct cie {
    uint64_t code_align;
    int64_t data_align;
    uint8_t fde_enc;
    int signal;
    int has_z; /* FDEs carry an augmentation data length */
    struct rd insns; /* initial instructions */
};

static void set_reg(struct cfa_state *s, uint64_t reg, int how, int64_t off)
{
    if (reg == REG_RBP) {
        s->rbp_how = how;
        s->rbp_off = off;
    } else if (reg == REG_RA) {
        s->ra_how = how;
        s->ra_off = off;
    }
}

static void restore_reg(struct cfa_state *s, const struct cfa_state *init, uint64_t reg)
{
    if (reg == REG_RBP) {
        s->rbp_how = init->rbp_how;
        s->rbp_off = init->rbp_off;
    } else if (reg == REG_RA) {
        s->ra_how = init->ra_how;
        s->ra_off = init->ra_off;
    }
}

#define STATE_STACK 8

/* Runs instructions while the location is <= target. `init` is the state
 * after the CIE's initial instructions (NULL while running those).
 * 0, or -1 for anything not understood. */
static int run_cfa(struct rd *r, const struct cie *c, struct cfa_state *s, const struct cfa_state *init,
                   uintptr_t loc, uintptr_t target)
{
    struct cfa_state stack[STATE_STACK];
    unsigned depth = 0;
    while (r->p < r->end && !r->bad) {
        uint8_t op = (uint8_t)rd_bytes(r, 1);
        uint64_t reg, delta = 0;
        int64_t off;
        switch (op & 0xc0) {
        case 0x40:
            delta = op & 0x3f;
            goto advance;
        case 0x80:
            off = (int64_t)rd_uleb(r) * c->data_align;
            set_reg(s, op & 0x3f, HOW_OFFSET, off);
            continue;
        case 0xc0:
            if (!init)
                return -1;
            restore_reg(s, init, op & 0x3f);
            continue;
        }
        switch (op) {
        case 0x00: /* nop */
            continue;
        case 0x01: /* set_loc */
            loc = (uintptr_t)rd_encoded(r, c->fde_enc, 0);
            if (loc > target)
                return 0;
            continue;
        case 0x02: delta = rd_bytes(r, 1); goto advance;
        case 0x03: delta = rd_bytes(r, 2); goto advance;
        case 0x04: delta = rd_bytes(r, 4); goto advance;
        case 0x05: /* offset_extended */
            reg = rd_uleb(r);
            off = (int64_t)rd_uleb(r) * c->data_align;
            set_reg(s, reg, HOW_OFFSET, off);
            continue;
        case 0x06: /* restore_extended */
            reg = rd_uleb(r);
            if (!init)
                return -1;
            restore_reg(s, init, reg);
            continue;
        case 0x07: /* undefined */
            set_reg(s, rd_uleb(r), HOW_UNDEF, 0);
            continue;
        case 0x08: /* same_value */
            set_reg(s, rd_uleb(r), HOW_SAME, 0);
            continue;
        case 0x09: /* register */
            reg = rd_uleb(r);
            rd_uleb(r);
            set_reg(s, reg, HOW_OTHER, 0);
            continue;
        case 0x0a: /* remember_state */
            if (depth == STATE_STACK)
                return -1;
            stack[depth++] = *s;
            continue;
        case 0x0b: /* restore_state: the CFA rule is restored too (DWARF 4 6.4.2.4) */
            if (depth == 0)
                return -1;
            *s = stack[--depth];
            continue;
        case 0x0c: /* def_cfa */
            s->cfa_reg = (int)rd_uleb(r);
            s->cfa_off = (int64_t)rd_uleb(r);
            continue;
        case 0x0d: /* def_cfa_register */
            s->cfa_reg = (int)rd_uleb(r);
            continue;
        case 0x0e: /* def_cfa_offset */
            s->cfa_off = (int64_t)rd_uleb(r);
            continue;
        case 0x0f: /* def_cfa_expression */
            return -1;
        case 0x10: /* expression */
        case 0x16: /* val_expression */
            reg = rd_uleb(r);
            {
                uint64_t len = rd_uleb(r);
                if (r->bad || len > (uint64_t)(r->end - r->p))
                    return -1;
                r->p += len;
            }
            set_reg(s, reg, HOW_OTHER, 0);
            continue;
        case 0x11: /* offset_extended_sf */
            reg = rd_uleb(r);
            off = rd_sleb(r) * c->data_align;
            set_reg(s, reg, HOW_OFFSET, off);
            continue;
        case 0x12: /* def_cfa_sf */
            s->cfa_reg = (int)rd_uleb(r);
            s->cfa_off = rd_sleb(r) * c->data_align;
            continue;
        case 0x13: /* def_cfa_offset_sf */
            s->cfa_off = rd_sleb(r) * c->data_align;
            continue;
        case 0x14: /* val_offset */
            reg = rd_uleb(r);
            rd_uleb(r);
            set_reg(s, reg, HOW_OTHER, 0);
            continue;
        case 0x15: /* val_offset_sf */
            reg = rd_uleb(r);
            rd_sleb(r);
            set_reg(s, reg, HOW_OTHER, 0);
            continue;
        case 0x2e: /* GNU_args_size */
            rd_uleb(r);
            continue;
        case 0x2f: /* GNU_negative_offset_extended */
            reg = rd_uleb(r);
            off = -(int64_t)rd_uleb(r) * c->data_align;
            set_reg(s, reg, HOW_OFFSET, off);
            continue;
        default:
            return -1;
        }
    advance:
        if (!init)
            return -1; /* a CIE does not advance */
        loc += delta * c->code_align;
        if (loc > target)
            return 0;
    }
    return r->bad ? -1 : 0;
}

/* Parses the CIE at p (its length field). 0 or -1. */
static int parse_cie(const uint8_t *p, struct cie *c)
{
    struct rd r = { p, p + 12, 0 };
    uint64_t len = rd_bytes(&r, 4);
    if (len == 0 || len == 0xffffffffu)
        return -1; /* a 64-bit CIE: not emitted for x86-64 ELF */
    r.end = p + 4 + len;
    if (rd_bytes(&r, 4) != 0)
        return -1; /* not a CIE */
    uint8_t version = (uint8_t)rd_bytes(&r, 1);
    if (version != 1 && version != 3)
        return -1;
    const char *aug = (const char *)r.p;
    size_t alen = strnlen(aug, (size_t)(r.end - r.p));
    if (alen == (size_t)(r.end - r.p))
        return -1;
    r.p += alen + 1;
    if (aug[0] && aug[0] != 'z')
        return -1; /* "eh" and other ancient forms */
    c->code_align = rd_uleb(&r);
    c->data_align = rd_sleb(&r);
    uint64_t ra = version == 1 ? rd_bytes(&r, 1) : rd_uleb(&r);
    if (ra != REG_RA)
        return -1;
    c->fde_enc = 0; /* absptr */
    c->signal = 0;
    c->has_z = aug[0] == 'z';
    if (aug[0] == 'z') {
        uint64_t dlen = rd_uleb(&r);
        if (r.bad || dlen > (uint64_t)(r.end - r.p))
            return -1;
        const uint8_t *data_end = r.p + dlen;
        for (size_t i = 1; i < alen; i++) {
            switch (aug[i]) {
            case 'R': c->fde_enc = (uint8_t)rd_bytes(&r, 1); break;
            case 'L': rd_bytes(&r, 1); break;
            case 'P': {
                uint8_t enc = (uint8_t)rd_bytes(&r, 1);
                rd_encoded(&r, enc & 0x7f, 0);
                break;
            }
            case 'S': c->signal = 1; break;
            default: return -1;
            }
        }
        r.p = data_end;
    }
    if (r.bad)
        return -1;
    c->insns.p = r.p;
    c->insns.end = r.end;
    c->insns.bad = 0;
    return 0;
}

/* Turns the state at the call site into a rule. */
static void encode_state(const struct cfa_state *s, struct pl_cfi_rule *out)
{
    out->kind = PL_CFI_OTHER;
    out->cfa_off = out->rbp_slot = 0;
    if (s->ra_how == HOW_UNDEF) {
        out->kind = PL_CFI_END;
        return;
    }
    if (s->ra_how != HOW_OFFSET || s->ra_off != -8)
        return;
    if (s->cfa_reg == REG_RBP) {
        if (s->cfa_off == 16 && s->rbp_how == HOW_OFFSET && s->rbp_off == -16)
            out->kind = PL_CFI_FP;
        return;
    }
    if (s->cfa_reg != REG_RSP || s->cfa_off <= 0 || s->cfa_off % 8 || s->cfa_off / 8 > OFF_MAX)
        return;
    if (s->rbp_how == HOW_SAME) {
        out->rbp_slot = 0;
    } else if (s->rbp_how == HOW_OFFSET && s->rbp_off < -8 && s->rbp_off % 8 == 0 && -s->rbp_off / 8 <= SLOT_MAX) {
        out->rbp_slot = (uint32_t)(-s->rbp_off / 8);
    } else {
        return;
    }
    out->cfa_off = (uint32_t)s->cfa_off;
    out->kind = PL_CFI_SP;
}

/* x86-64 Linux's signal trampoline (glibc's __restore_rt, the kernel's
 * vDSO): mov $15, %rax (rt_sigreturn); syscall. */
static const uint8_t pl_sigreturn_code[9] = { 0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05 };

/* Rule for return address ra from the FDE at fde (within [fde, fde_end)
 * of a loaded module's .eh_frame); the module's code segment containing
 * ra - 1 ends at code_end. */
static void rule_from_fde(const uint8_t *fde, uintptr_t ra, uintptr_t code_end, struct pl_cfi_rule *out)
{
    out->kind = PL_CFI_OTHER;
    struct rd r = { fde, fde + 8, 0 };
    uint64_t len = rd_bytes(&r, 4);
    if (len == 0 || len == 0xffffffffu)
        return;
    r.end = fde + 4 + len;
    const uint8_t *cie_field = r.p;
    uint32_t cie_off = (uint32_t)rd_bytes(&r, 4);
    if (r.bad || cie_off == 0)
        return;
    struct cie c;
    if (parse_cie(cie_field - cie_off, &c) != 0)
        return;
    if (c.signal) {
        /* The kernel's frame layout (a ucontext at the trampoline's stack
         * pointer) is known only for the trampoline itself: check its code. */
        if (ra <= code_end && code_end - ra >= sizeof(pl_sigreturn_code) &&
            memcmp((const void *)ra, pl_sigreturn_code, sizeof(pl_sigreturn_code)) == 0)
            out->kind = PL_CFI_SIGNAL;
        return;
    }
    uintptr_t begin = (uintptr_t)rd_encoded(&r, c.fde_enc, 0);
    uintptr_t range = (uintptr_t)rd_encoded(&r, c.fde_enc & 0x0f, 0);
    /* A return address is just past the call: the call's rules are those
     * of ra - 1 (what libunwind does for every non-signal frame). */
    uintptr_t target = ra - 1;
    if (r.bad || target < begin || target - begin >= range)
        return;
    if (c.has_z) {
        uint64_t alen = rd_uleb(&r);
        if (r.bad || alen > (uint64_t)(r.end - r.p))
            return;
        r.p += alen;
    }
    /* x86-64 psABI: before the CIE's instructions nothing is known; every
     * compiler's CIE starts with def_cfa rsp+8, offset ra at cfa-8. */
    struct cfa_state s = { -1, 0, HOW_SAME, HOW_OTHER, 0, 0 };
    struct rd ci = c.insns;
    if (run_cfa(&ci, &c, &s, NULL, begin, target) != 0)
        return;
    struct cfa_state init = s;
    if (run_cfa(&r, &c, &s, &init, begin, target) != 0)
        return;
    encode_state(&s, out);
}

/* The FDE covering pc from the sorted table of .eh_frame_hdr at hdr, or
 * NULL. Only the universal table encoding (datarel sdata4) is searched. */
static const uint8_t *find_fde(const uint8_t *hdr, size_t hdr_len, uintptr_t pc)
{
    struct rd r = { hdr, hdr + hdr_len, 0 };
    uint8_t version = (uint8_t)rd_bytes(&r, 1);
    uint8_t ptr_enc = (uint8_t)rd_bytes(&r, 1);
    uint8_t count_enc = (uint8_t)rd_bytes(&r, 1);
    uint8_t table_enc = (uint8_t)rd_bytes(&r, 1);
    if (r.bad || version != 1 || table_enc != (DW_EH_PE_datarel | 0x0b) || count_enc == DW_EH_PE_omit)
        return NULL;
    rd_encoded(&r, ptr_enc, (uintptr_t)hdr);
    uint64_t count = rd_encoded(&r, count_enc, (uintptr_t)hdr);
    if (r.bad || count == 0 || count > (uint64_t)(r.end - r.p) / 8)
        return NULL;
    const uint8_t *table = r.p;
    int64_t rel = (int64_t)(pc - (uintptr_t)hdr);
    /* last entry with initial_loc <= pc */
    uint64_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        int32_t loc;
        memcpy(&loc, table + mid * 8, 4);
        if ((int64_t)loc <= rel)
            lo = mid;
        else
            hi = mid;
    }
    int32_t loc, fde;
    memcpy(&loc, table + lo * 8, 4);
    memcpy(&fde, table + lo * 8 + 4, 4);
    if ((int64_t)loc > rel)
        return NULL;
    return hdr + fde;
}

struct find_arg {
    uintptr_t pc;
    struct pl_cfi_rule *out;
};

/* dl_iterate_phdr callback: the rule from the module containing pc. The
 * loader's lock is held, so the module stays mapped while we read it. */
static int find_rule(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct find_arg *a = data;
    const ElfW(Phdr) *eh = NULL;
    int inside = 0;
    uintptr_t code_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && a->pc - 1 >= s && a->pc - 1 < s + ph->p_memsz) {
            inside = 1;
            code_end = s + ph->p_filesz;
        } else if (ph->p_type == PT_GNU_EH_FRAME)
            eh = ph;
    }
    if (!inside)
        return 0;
    if (eh) {
        const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
        const uint8_t *fde = find_fde(hdr, eh->p_memsz, a->pc - 1);
        if (fde)
            rule_from_fde(fde, a->pc, code_end, a->out);
    }
    return 1;
}

void pl_cfi_rule_uncached(uintptr_t ra, struct pl_cfi_rule *out)
{
    out->kind = PL_CFI_OTHER;
    out->cfa_off = out->rbp_slot = 0;
    if (ra < 2)
        return;
    struct find_arg a = { ra, out };
    dl_iterate_phdr(find_rule, &a);
}

static uint64_t encode_word(uintptr_t ra, const struct pl_cfi_rule *r)
{
    if (r->kind == PL_CFI_SIGNAL)
        return (uint64_t)ra | PL_CFI_SIGNAL_MARK;
    return (uint64_t)ra | (uint64_t)r->kind << RA_BITS | (uint64_t)(r->cfa_off / 8) << 49 |
           (uint64_t)r->rbp_slot << 59;
}

static void decode_word(uint64_t w, struct pl_cfi_rule *r)
{
    if (PL_CFI_IS_SIGNAL(w)) {
        r->kind = PL_CFI_SIGNAL;
        r->cfa_off = r->rbp_slot = 0;
        return;
    }
    r->kind = (unsigned)(w >> RA_BITS) & 3u;
    r->cfa_off = (uint32_t)((w >> 49) & OFF_MAX) * 8u;
    r->rbp_slot = (uint32_t)(w >> 59);
}

uint64_t pl_cfi_miss(uintptr_t ra)
{
    struct pl_cfi_rule r;
    pl_cfi_rule_uncached(ra, &r);
    uint64_t *c = pl_cfi_cache;
    if (!c || ra - 1 >= RA_MASK)
        return encode_word(0, &r); /* not cacheable (0 for OTHER) */
    pl_cfi_hint(ra); /* a followed child's: for its parent to cache (cfi_hints.h) */
    uint64_t w = encode_word(ra, &r);
    uint64_t *line = &c[(((uint64_t)ra * 0x9E3779B97F4A7C15ull) >> (64 - PL_CFI_BITS + 3)) * PL_CFI_WAYS];
    for (unsigned i = 0; i < PL_CFI_WAYS; i++) {
        if (__atomic_load_n(&line[i], __ATOMIC_RELAXED) == 0) {
            __atomic_store_n(&line[i], w, __ATOMIC_RELAXED);
            return w;
        }
    }
    __atomic_store_n(&line[(ra >> 2) & (PL_CFI_WAYS - 1)], w, __ATOMIC_RELAXED);
    return w;
}

void pl_cfi_rule(uintptr_t ra, struct pl_cfi_rule *out)
{
    decode_word(pl_cfi_word(ra), out);
}
