/* codes.c - code objects named at first sight (codes.h). */
#include "payload/python/codes.h"

#include <string.h>
#include <sys/mman.h>

#define PL_PY_CODE_BUSY ((uintptr_t)1)
#define PROBES 16u

int pl_py_codes_init(struct pl_py_codes *c)
{
    void *m = mmap(NULL, PL_PY_CODES * sizeof(struct pl_py_code), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    c->slots = m == MAP_FAILED ? NULL : m;
    return c->slots ? 0 : -1;
}

void pl_py_codes_release(struct pl_py_codes *c)
{
    if (c->slots)
        munmap(c->slots, PL_PY_CODES * sizeof(struct pl_py_code));
    c->slots = NULL;
}

/* What tells one code object at an address from a later one there. */
struct key {
    uintptr_t name_obj, file_obj;
    int32_t firstlineno;
};

static int read_key(const struct pl_py_offsets *o, const struct pl_py_reader *r, uintptr_t code, struct key *k)
{
    return r->read(r->ctx, code + o->co_name, &k->name_obj, sizeof(k->name_obj)) < 0 ||
                   r->read(r->ctx, code + o->co_filename, &k->file_obj, sizeof(k->file_obj)) < 0 ||
                   r->read(r->ctx, code + o->co_firstlineno, &k->firstlineno, sizeof(k->firstlineno)) < 0
               ? -1
               : 0;
}

static int fill(struct pl_py_code *e, const struct pl_py_offsets *o, const struct pl_py_types *t,
                const struct pl_py_reader *r, uintptr_t code, const struct key *k)
{
    uint32_t first;
    if (pl_py_code_names(o, t, r, code, e->name, sizeof(e->name), e->file, sizeof(e->file), &first) < 0)
        return -1;
    long n = pl_py_code_linetable(o, r, code, e->table, sizeof(e->table));
    e->table_len = n < 0 ? 0 : (uint32_t)n;
    e->table_cut = n < 0;
    e->firstlineno = first;
    e->name_obj = k->name_obj;
    e->file_obj = k->file_obj;
    return 0;
}

uint32_t pl_py_codes_get(struct pl_py_codes *c, const struct pl_py_offsets *o, const struct pl_py_types *t,
                         const struct pl_py_reader *r, uintptr_t code)
{
    struct key k;
    if (!c->slots || code <= PL_PY_CODE_BUSY || read_key(o, r, code, &k) < 0)
        return 0;
    uint32_t h = (uint32_t)(((uint64_t)(code >> 4) * 0x9e3779b97f4a7c15ull) >> 40);
    for (uint32_t i = 0; i < PROBES; i++) {
        uint32_t s = (h + i) & (PL_PY_CODES - 1);
        struct pl_py_code *e = &c->slots[s];
        uintptr_t v = __atomic_load_n(&e->code, __ATOMIC_ACQUIRE);
        if (v == code) {
            if (e->name_obj == k.name_obj && e->file_obj == k.file_obj && e->firstlineno == (uint32_t)k.firstlineno)
                return s + 1;
            continue; /* another code object that lived at this address */
        }
        if (v == PL_PY_CODE_BUSY)
            return 0;
        if (v != 0)
            continue;
        uintptr_t zero = 0;
        if (!__atomic_compare_exchange_n(&e->code, &zero, PL_PY_CODE_BUSY, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
            return 0; /* taken under us: a miss rather than a wait */
        if (fill(e, o, t, r, code, &k) < 0) {
            __atomic_store_n(&e->code, 0, __ATOMIC_RELEASE);
            return 0;
        }
        __atomic_store_n(&e->code, code, __ATOMIC_RELEASE);
        return s + 1;
    }
    return 0;
}

const struct pl_py_code *pl_py_codes_entry(const struct pl_py_codes *c, uint32_t id)
{
    if (!c->slots || id == 0 || id > PL_PY_CODES)
        return NULL;
    const struct pl_py_code *e = &c->slots[id - 1];
    uintptr_t v = __atomic_load_n(&e->code, __ATOMIC_ACQUIRE);
    return v > PL_PY_CODE_BUSY ? e : NULL;
}
