/* symtab.c - the rules of dwfl_module_addrinfo() over a sorted index.
 *
 * elfutils (libdwfl/dwfl_module_addrsym.c, 0.188) answers an address by
 * scanning every symbol: first the global part of the table, then, only if
 * no global matched, the local part. Eligible symbols have a name, a
 * section, a value <= addr and are not SECTION, FILE or TLS symbols. Among
 * the sized symbols that contain addr, in table order, a symbol replaces
 * the current best when it starts closer to addr or binds more strongly
 * (global > weak > local), or when it starts at the same value and is
 * smaller without binding more weakly. Sizeless symbols (assembly labels)
 * are only a fallback when no sized symbol contains addr, and only when no
 * symbol below addr reaches past them.
 *
 * The index keeps each part sorted by value with the running maximum of
 * value + size, so the sized symbols containing addr are found by a binary
 * search and a short walk back; they are then folded in table order with
 * the same rule. The sizeless fallback depends on the order of the scan in
 * ways not worth copying: whenever a label could be the answer (one sits
 * exactly at addr, or exactly where the highest symbol below addr ends),
 * the lookup asks libdwfl itself. That is rare (code between sized
 * functions that starts with a label), so the answer is always libdwfl's
 * and nearly always without its scan. */
#include "cli/symbolize/symtab.h"

#include <errno.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>

struct symtab_ent {
    GElf_Addr value;       /* address as libdwfl resolves it */
    GElf_Addr end;         /* value + size */
    GElf_Addr max_end;     /* highest end of this entry and all before it */
    GElf_Xword size;
    const char *name;      /* in the Dwfl's string table */
    int ndx;               /* position in libdwfl's scan */
    int binding;           /* global 3, weak 2, local 1, other 0 */
};

/* One part of the table (globals or locals), sorted by value then ndx. */
struct symtab_part {
    struct symtab_ent *e;
    size_t n;
};

struct cli_symtab {
    Dwfl_Module *mod;
    bool ask_libdwfl;      /* index not usable: every lookup asks libdwfl */
    bool none;             /* no symbol table: every lookup is NULL */
    bool scan_locals;      /* libdwfl searches locals when no global matched */
    struct symtab_part global, local;
};

/* Candidates that contain one address are aliases of a function: a
 * handful. More than this and the lookup asks libdwfl. */
#define MAX_CANDIDATES 64

static int binding_value(const GElf_Sym *sym)
{
    switch (GELF_ST_BIND(sym->st_info)) {
    case STB_GLOBAL: return 3;
    case STB_WEAK: return 2;
    case STB_LOCAL: return 1;
    default: return 0;
    }
}

static int cmp_ent(const void *a, const void *b)
{
    const struct symtab_ent *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/* Reads symbols [from, to) of mod into part. 0, -ENOMEM, or 1 when an
 * entry cannot be indexed (value + size wraps around). */
static int fill_part(Dwfl_Module *mod, int from, int to, struct symtab_part *part)
{
    if (to <= from)
        return 0;
    part->e = malloc((size_t)(to - from) * sizeof(*part->e));
    if (!part->e)
        return -ENOMEM;
    for (int i = from; i < to; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE ||
            type == STT_TLS)
            continue;
        if (value + sym.st_size < value)
            return 1;
        part->e[part->n++] = (struct symtab_ent){
            .value = value, .end = value + sym.st_size, .size = sym.st_size,
            .name = name, .ndx = i, .binding = binding_value(&sym),
        };
    }
    qsort(part->e, part->n, sizeof(*part->e), cmp_ent);
    GElf_Addr max = 0;
    for (size_t i = 0; i < part->n; i++) {
        if (part->e[i].end > max)
            max = part->e[i].end;
        part->e[i].max_end = max;
    }
    return 0;
}

struct cli_symtab *cli_symtab_new(Dwfl_Module *mod)
{
    struct cli_symtab *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->mod = mod;
    int syments = dwfl_module_getsymtab(mod);
    int first_global = syments >= 0 ? dwfl_module_getsymtab_first_global(mod) : -1;
    if (syments < 0 || first_global < 0) {
        t->none = true; /* dwfl_module_addrinfo fails the same way */
        return t;
    }
    /* PowerPC64 ELFv1 names functions through descriptors, which libdwfl
     * resolves and then matches twice: not worth copying. */
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    GElf_Ehdr eh;
    if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine == EM_PPC64) {
        t->ask_libdwfl = true;
        return t;
    }
    int rc = fill_part(mod, first_global == 0 ? 1 : first_global, syments, &t->global);
    t->scan_locals = first_global > 1;
    if (rc == 0 && t->scan_locals)
        rc = fill_part(mod, 1, first_global, &t->local);
    if (rc < 0) {
        cli_symtab_free(t);
        errno = ENOMEM;
        return NULL;
    }
    if (rc > 0)
        t->ask_libdwfl = true;
    return t;
}

void cli_symtab_free(struct cli_symtab *t)
{
    if (!t)
        return;
    free(t->global.e);
    free(t->local.e);
    free(t);
}

/* Number of entries with value <= addr (they come first). */
static size_t count_upto(const struct symtab_part *p, GElf_Addr addr)
{
    size_t lo = 0, hi = p->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->e[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int cmp_ndx(const void *a, const void *b)
{
    const struct symtab_ent *x = *(const struct symtab_ent *const *)a, *y = *(const struct symtab_ent *const *)b;
    return x->ndx < y->ndx ? -1 : x->ndx > y->ndx;
}

/* libdwfl's choice among the sized symbols of p that contain addr, NULL
 * when none does. *overflow when there were too many to fold here. */
static const struct symtab_ent *best_sized(const struct symtab_part *p, GElf_Addr addr, bool *overflow)
{
    const struct symtab_ent *cand[MAX_CANDIDATES];
    size_t nc = 0;
    for (size_t k = count_upto(p, addr); k-- > 0;) {
        const struct symtab_ent *e = &p->e[k];
        if (e->max_end <= addr)
            break; /* nothing at or before k reaches addr */
        if (e->size && addr - e->value < e->size) {
            if (nc == MAX_CANDIDATES) {
                *overflow = true;
                return NULL;
            }
            cand[nc++] = e;
        }
    }
    if (nc > 1)
        qsort(cand, nc, sizeof(cand[0]), cmp_ndx);
    const struct symtab_ent *best = NULL;
    for (size_t i = 0; i < nc; i++) {
        const struct symtab_ent *s = cand[i];
        if (!best || best->value < s->value || best->binding < s->binding)
            best = s;
        else if (best->value == s->value &&
                 ((best->size > s->size && best->binding <= s->binding) ||
                  (best->size >= s->size && best->binding < s->binding)))
            best = s;
    }
    return best;
}

/* Is there a sizeless entry at exactly value v? */
static bool sizeless_at(const struct symtab_part *p, GElf_Addr v)
{
    for (size_t k = count_upto(p, v); k-- > 0 && p->e[k].value == v;)
        if (p->e[k].size == 0)
            return true;
    return false;
}

/* Highest end among the entries with value <= addr; 0 when none. */
static GElf_Addr max_end_upto(const struct symtab_part *p, GElf_Addr addr)
{
    size_t k = count_upto(p, addr);
    return k ? p->e[k - 1].max_end : 0;
}

static const char *ask_libdwfl(const struct cli_symtab *t, GElf_Addr addr, GElf_Addr *start)
{
    GElf_Off off = 0;
    GElf_Sym sym;
    const char *n = dwfl_module_addrinfo(t->mod, addr, &off, &sym, NULL, NULL, NULL);
    *start = addr - off;
    return n;
}

const char *cli_symtab_lookup(const struct cli_symtab *t, GElf_Addr addr)
{
    GElf_Addr start;
    return cli_symtab_lookup_at(t, addr, &start);
}

const char *cli_symtab_lookup_at(const struct cli_symtab *t, GElf_Addr addr, GElf_Addr *start)
{
    bool overflow = false;
    if (t->none)
        return NULL;
    if (t->ask_libdwfl)
        return ask_libdwfl(t, addr, start);
    const struct symtab_ent *best = best_sized(&t->global, addr, &overflow);
    if (best)
        return *start = best->value, best->name;
    /* A global label right at addr may stop libdwfl from trying locals. */
    if (overflow || sizeless_at(&t->global, addr))
        return ask_libdwfl(t, addr, start);
    if (t->scan_locals) {
        best = best_sized(&t->local, addr, &overflow);
        if (best)
            return *start = best->value, best->name;
        if (overflow)
            return ask_libdwfl(t, addr, start);
    }
    /* No sized symbol contains addr: only a label at the highest end below
     * addr could still be chosen (libdwfl's min_label rule). */
    GElf_Addr top = max_end_upto(&t->global, addr);
    if (t->scan_locals) {
        GElf_Addr lt = max_end_upto(&t->local, addr);
        if (lt > top)
            top = lt;
    }
    if (sizeless_at(&t->global, top) || (t->scan_locals && sizeless_at(&t->local, top)))
        return ask_libdwfl(t, addr, start);
    return NULL;
}
