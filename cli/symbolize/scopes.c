/* scopes.c - per-CU flattened scope trees, searched per address.
 *
 * One walk of a CU records every DIE that dwarf_getscopes() could match (a
 * DIE with at least one non-empty address range, reached through DIEs that
 * themselves have ranges and can hold scopes) as a node with its parent.
 * The ranges of the children of each node are kept together, sorted by
 * start with the running maximum of their ends, so the first child (in DIE
 * order) containing an address is a binary search and a short walk back
 * away. An address then costs one such search per nesting level instead of
 * a walk of the CU's DIEs.
 *
 * Differences from dwarf_getscopes (0.188, libdw/dwarf_getscopes.c and
 * libdw_visit_scopes.c), all deliberate: the result is the concrete
 * nesting (see cli/symbolize/scopes.h); a DIE whose ranges cannot be read
 * counts with the ranges read so far instead of failing the whole lookup;
 * and namespaces and types, which have no addresses, are looked through
 * (libdw prunes them, so a Rust function, always nested in its crate's
 * namespace, lost every inlined call: issue 16).
 * An import cycle, or a DIE tree that cannot be walked, marks the CU as
 * having no scopes, which is what dwarf_getscopes' error gave. */
#include "cli/symbolize/scopes.h"

#include <dwarf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli/util/hindex.h"

#define NO_NODE UINT32_MAX

struct scope_node {
    Dwarf_Die die;
    uint32_t parent;                 /* NO_NODE: a child of the CU */
    uint32_t kids_first, kids_n;     /* the children's ranges in cu_index.ranges */
};

struct scope_range {
    Dwarf_Addr lo, hi;               /* [lo, hi) */
    Dwarf_Addr max_hi;               /* highest hi of this range and those before it in its slice */
    uint32_t node;
};

struct cu_index {
    const void *key;                 /* the CU DIE's address in the DWARF data */
    bool broken;                     /* walk failed: no scopes in this CU */
    struct scope_node *nodes;        /* in DIE order (preorder) */
    size_t nnodes, cap_nodes;
    struct scope_range *ranges;
    size_t nranges, cap_ranges;
    uint32_t top_first, top_n;       /* ranges of the CU's own children */
};

struct cli_scopes {
    struct cu_index **cus;           /* indexed CUs, in the order first met */
    size_t n, cap;
    struct cli_hindex index;         /* CU's DIE address -> its place in cus */
};

/* State of one CU walk: ranges of children whose parent is still being
 * walked wait in pend, innermost parent's on top. */
struct build {
    struct cu_index *ci;
    struct scope_range *pend;
    size_t npend, cap_pend;
};

struct import {
    const void *addr;                /* the DW_TAG_imported_unit DIE */
    const struct import *up;
};

/* The tags libdw descends into (libdw_visit_scopes.c, may_have_scopes). */
static bool may_have_scopes(int tag)
{
    switch (tag) {
    case DW_TAG_compile_unit:
    case DW_TAG_module:
    case DW_TAG_lexical_block:
    case DW_TAG_with_stmt:
    case DW_TAG_catch_block:
    case DW_TAG_try_block:
    case DW_TAG_entry_point:
    case DW_TAG_inlined_subroutine:
    case DW_TAG_subprogram:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
        return true;
    default:
        return false;
    }
}

/* Tags without addresses of their own whose children may have some. */
static bool holds_definitions(int tag)
{
    switch (tag) {
    case DW_TAG_module:
    case DW_TAG_namespace:
    case DW_TAG_class_type:
    case DW_TAG_structure_type:
    case DW_TAG_union_type:
        return true;
    default:
        return false;
    }
}

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 256;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np)
        return -ENOMEM;
    *p = np;
    *cap = nc;
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct scope_range *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->node < y->node ? -1 : x->node > y->node;
}

/* Moves pend[from..] (the children's ranges of one parent) to the index,
 * sorted; returns the slice through first/n. */
static int finish(struct build *b, size_t from, uint32_t *first, uint32_t *n)
{
    struct cu_index *ci = b->ci;
    size_t cnt = b->npend - from;
    *first = (uint32_t)ci->nranges;
    *n = (uint32_t)cnt;
    if (!cnt)
        return 0;
    if (grow((void **)&ci->ranges, &ci->cap_ranges, ci->nranges + cnt, sizeof(*ci->ranges)) < 0)
        return -ENOMEM;
    struct scope_range *dst = &ci->ranges[ci->nranges];
    for (size_t i = 0; i < cnt; i++)
        dst[i] = b->pend[from + i];
    qsort(dst, cnt, sizeof(*dst), cmp_range);
    Dwarf_Addr max = 0;
    for (size_t i = 0; i < cnt; i++) {
        if (dst[i].hi > max)
            max = dst[i].hi;
        dst[i].max_hi = max;
    }
    ci->nranges += cnt;
    b->npend = from;
    return 0;
}

/* Walks first and its siblings, children of node parent. 0, -ENOMEM, or
 * -EINVAL when the tree cannot be walked. */
static int walk(struct build *b, Dwarf_Die first, uint32_t parent, const struct import *imports)
{
    struct cu_index *ci = b->ci;
    Dwarf_Die d = first;
    int r;
    do {
        if (dwarf_tag(&d) == DW_TAG_imported_unit) {
            /* Its children count as siblings in place (a partial unit of
             * dwz, or gcc -flto's imports, which name a whole CU and are
             * skipped). */
            Dwarf_Attribute am;
            Dwarf_Die unit, child;
            if (dwarf_formref_die(dwarf_attr(&d, DW_AT_import, &am), &unit) &&
                dwarf_tag(&unit) != DW_TAG_compile_unit && dwarf_child(&unit, &child) == 0) {
                for (const struct import *i = imports; i; i = i->up)
                    if (i->addr == d.addr)
                        return -EINVAL;
                struct import here = { d.addr, imports };
                int rc = walk(b, child, parent, &here);
                if (rc < 0)
                    return rc;
            }
            continue;
        }
        size_t mark = b->npend;
        uint32_t node = (uint32_t)ci->nnodes;
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        /* A read error ends the list: dwarf_haspc() treats the usual ones
         * (no .debug_ranges / .debug_rnglists) as "does not contain". */
        while ((off = dwarf_ranges(&d, off, &base, &lo, &hi)) > 0) {
            if (lo >= hi)
                continue;
            if (grow((void **)&b->pend, &b->cap_pend, b->npend + 1, sizeof(*b->pend)) < 0)
                return -ENOMEM;
            b->pend[b->npend++] = (struct scope_range){ lo, hi, 0, node };
        }
        if (b->npend == mark) {
            /* A namespace or type never has addresses, but Rust (and C++
             * with in-class definitions) nests functions in them: their
             * children count as siblings in place, as an import's do. Any
             * other DIE without addresses has no matching children. */
            Dwarf_Die child;
            if (holds_definitions(dwarf_tag(&d)) && dwarf_haschildren(&d) && dwarf_child(&d, &child) == 0) {
                int rc = walk(b, child, parent, imports);
                if (rc < 0)
                    return rc;
            }
            continue;
        }
        if (grow((void **)&ci->nodes, &ci->cap_nodes, ci->nnodes + 1, sizeof(*ci->nodes)) < 0)
            return -ENOMEM;
        ci->nodes[ci->nnodes++] = (struct scope_node){ d, parent, 0, 0 };
        Dwarf_Die child;
        if (may_have_scopes(dwarf_tag(&d)) && dwarf_haschildren(&d)) {
            if ((r = dwarf_child(&d, &child)) < 0)
                return -EINVAL;
            if (r == 0) {
                size_t kids = b->npend;
                int rc = walk(b, child, node, imports);
                if (rc < 0)
                    return rc;
                if ((rc = finish(b, kids, &ci->nodes[node].kids_first, &ci->nodes[node].kids_n)) < 0)
                    return rc;
            }
        }
    } while ((r = dwarf_siblingof(&d, &d)) == 0);
    return r < 0 ? -EINVAL : 0;
}

static void free_index(struct cu_index *ci)
{
    if (!ci)
        return;
    free(ci->nodes);
    free(ci->ranges);
    free(ci);
}

/* Indexes one CU. NULL only for ENOMEM; a CU that cannot be walked gives
 * an index marked broken. */
static struct cu_index *build_index(Dwarf_Die *cu)
{
    struct cu_index *ci = calloc(1, sizeof(*ci));
    struct build b = { .ci = ci };
    Dwarf_Die child;
    int rc = 0;
    if (!ci)
        return NULL;
    ci->key = cu->addr;
    int r = dwarf_child(cu, &child);
    if (r < 0)
        rc = -EINVAL;
    else if (r == 0 && (rc = walk(&b, child, NO_NODE, NULL)) == 0)
        rc = finish(&b, 0, &ci->top_first, &ci->top_n);
    free(b.pend);
    if (rc == -ENOMEM) {
        free_index(ci);
        return NULL;
    }
    if (rc < 0) {
        /* Keep nothing: the lookup would have failed for this CU. */
        ci->broken = true;
        ci->nnodes = ci->nranges = 0;
        ci->top_n = 0;
    }
    return ci;
}

struct cli_scopes *cli_scopes_new(void)
{
    return calloc(1, sizeof(struct cli_scopes));
}

void cli_scopes_free(struct cli_scopes *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free_index(s->cus[i]);
    free(s->cus);
    cli_hindex_free(&s->index);
    free(s);
}

static struct cu_index *index_of(struct cli_scopes *s, Dwarf_Die *cu)
{
    uint64_t key = (uint64_t)(uintptr_t)cu->addr;
    long found = cli_hindex_find(&s->index, key, NULL, NULL);
    if (found >= 0)
        return s->cus[found];
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        struct cu_index **ncus = realloc(s->cus, nc * sizeof(*ncus));
        if (!ncus)
            return NULL;
        s->cus = ncus;
        s->cap = nc;
    }
    struct cu_index *ci = build_index(cu);
    if (!ci)
        return NULL;
    if (cli_hindex_add(&s->index, key, s->n) < 0) {
        free_index(ci);
        return NULL;
    }
    s->cus[s->n++] = ci;
    return ci;
}

/* The first node in DIE order among those whose range in the slice
 * contains pc, NO_NODE when none does. */
static uint32_t first_containing(const struct cu_index *ci, uint32_t first, uint32_t n, Dwarf_Addr pc)
{
    const struct scope_range *r = &ci->ranges[first];
    size_t lo = 0, hi = n;
    while (lo < hi) { /* count of ranges starting at or below pc */
        size_t mid = lo + (hi - lo) / 2;
        if (r[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint32_t best = NO_NODE;
    for (size_t k = lo; k-- > 0 && r[k].max_hi > pc;)
        if (r[k].hi > pc && r[k].node < best)
            best = r[k].node;
    return best;
}

int cli_scopes_find(struct cli_scopes *s, Dwarf_Die *cu, Dwarf_Addr pc, const Dwarf_Die **out, size_t max)
{
    struct cu_index *ci = index_of(s, cu);
    if (!ci)
        return -ENOMEM;
    uint32_t inner = NO_NODE, first = ci->top_first, n = ci->top_n;
    for (uint32_t x; n && (x = first_containing(ci, first, n, pc)) != NO_NODE;) {
        inner = x;
        first = ci->nodes[x].kids_first;
        n = ci->nodes[x].kids_n;
    }
    size_t k = 0;
    for (uint32_t x = inner; x != NO_NODE && k < max; x = ci->nodes[x].parent)
        out[k++] = &ci->nodes[x].die;
    return (int)k;
}
