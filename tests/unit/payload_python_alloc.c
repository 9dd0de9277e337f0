/* payload_python_alloc.c - the wrappers in front of CPython's MEM and OBJ
 * domains (payload/interpose/pymalloc.c), called as CPython calls them, in front
 * of a made-up allocator that records what reaches it: every call goes to
 * the old allocator with its own ctx and returns its result; at rate 1
 * blocks of 1 to 512 bytes are sampled as kind pymalloc and leave the map
 * when freed; 0 and 513 bytes (malloc's, in CPython) are not; a realloc
 * during which the malloc hooks counted an allocation is malloc's; detached,
 * the wrappers only forward. */
/* Covers: payload/interpose/pymalloc.c */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "payload/interpose/pymalloc.h"
#include "payload/record/addrmap.h"
#include "payload/record/bucket.h"
#include "payload/record/session.h"
#include "payload/record/stack.h"
#include "payload/record/thread.h"

/* The made-up old allocator: libc's, counting its calls per ctx. */
struct fake {
    unsigned mallocs, callocs, reallocs, frees;
    int realloc_counts_malloc; /* its realloc looks like one that went to malloc's hooks */
};
static struct fake fake;

static void *f_malloc(void *ctx, size_t n)
{
    cr_assert_eq(ctx, &fake);
    fake.mallocs++;
    return malloc(n ? n : 1);
}

static void *f_calloc(void *ctx, size_t a, size_t b)
{
    cr_assert_eq(ctx, &fake);
    fake.callocs++;
    return calloc(a ? a : 1, b ? b : 1);
}

static void *f_realloc(void *ctx, void *p, size_t n)
{
    cr_assert_eq(ctx, &fake);
    fake.reallocs++;
    if (fake.realloc_counts_malloc && pl_tls.self)
        pl_tls.self->c.alloc.calls++; /* what the malloc hook does on this thread */
    return realloc(p, n ? n : 1);
}

static void f_free(void *ctx, void *p)
{
    cr_assert_eq(ctx, &fake);
    fake.frees++;
    free(p);
}

static struct pl_pym_allocator w;

static void setup(void)
{
    cr_assert_eq(pl_thread_init(), 0);
    cr_assert_eq(pl_bucket_init(), 0);
    cr_assert_eq(pl_addrmap_init(), 0);
    cr_assert_eq(pl_stack_init(), 0);
    pl_bucket_reset();
    pl_addrmap_reset();
    memset(&fake, 0, sizeof(fake));
    pl_pym_obj.old = (struct pl_pym_allocator){ &fake, f_malloc, f_calloc, f_realloc, f_free };
    w = pl_pymalloc_wrapper(&pl_pym_obj);
    cr_assert_eq(w.ctx, &pl_pym_obj);
}

static void attach(void)
{
    setup();
    pl_session_lock();
    pl_session_begin(1); /* every byte a sampling point: every block sampled */
    pl_session_unlock();
}

static void detach(void)
{
    __atomic_store_n(&pl_live_key, PL_KEY_OFF, __ATOMIC_RELEASE);
    pl_state_set(PL_IDLE);
}

/* Live sampled objects and bytes of a kind over every bucket. */
static void live(uint32_t kind, uint64_t *objs, uint64_t *bytes)
{
    *objs = *bytes = 0;
    for (uint32_t i = 0; i < pl_bucket_count(); i++) {
        const struct pl_bucket *b = pl_bucket_at(i);
        if (b->kind != kind)
            continue;
        *objs += b->raw_live_objs;
        *bytes += b->raw_live_bytes;
    }
}

Test(payload_python_alloc, small_blocks_sampled_as_pymalloc_and_gone_when_freed, .init = attach, .fini = detach)
{
    uint64_t objs, bytes;
    void *a = w.malloc(w.ctx, 56);
    void *b = w.calloc(w.ctx, 3, 8);
    void *c = w.malloc(w.ctx, 512);
    cr_assert(a && b && c);
    cr_expect_eq(fake.mallocs, 2);
    cr_expect_eq(fake.callocs, 1);
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 3);
    cr_expect_eq(bytes, 56 + 24 + 512);
    live(HI_KIND_MALLOC, &objs, &bytes);
    cr_expect_eq(objs, 0, "pymalloc's blocks are not malloc's");
    w.free(w.ctx, a);
    w.free(w.ctx, b);
    w.free(w.ctx, c);
    cr_expect_eq(fake.frees, 3);
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 0);
    cr_expect_eq(bytes, 0);
    cr_expect_eq(pl_addrmap_count(), 0);
}

Test(payload_python_alloc, blocks_pymalloc_hands_to_malloc_are_left_to_its_hooks, .init = attach, .fini = detach)
{
    uint64_t objs, bytes;
    void *big = w.malloc(w.ctx, 513);
    void *none = w.malloc(w.ctx, 0);
    void *zeroed = w.calloc(w.ctx, 100, 8);
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 0, "0 and over 512 bytes are malloc's in CPython");
    cr_expect_eq(pl_addrmap_count(), 0);
    w.free(w.ctx, big);
    w.free(w.ctx, none);
    w.free(w.ctx, zeroed);
    cr_expect_eq(fake.frees, 3);
}

Test(payload_python_alloc, realloc_moves_the_sample_unless_malloc_served_it, .init = attach, .fini = detach)
{
    uint64_t objs, bytes;
    void *p = w.malloc(w.ctx, 40);
    p = w.realloc(w.ctx, p, 200);
    cr_assert(p);
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 1);
    cr_expect_eq(bytes, 200, "the old sample left, the new size came in");
    fake.realloc_counts_malloc = 1; /* a malloc'ed block shrinking below 512 stays malloc's */
    p = w.realloc(w.ctx, p, 100);
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 0, "a realloc the malloc hooks counted is not pymalloc's");
    cr_expect_eq(fake.reallocs, 2);
    w.free(w.ctx, p);
    cr_expect_eq(pl_addrmap_count(), 0);
}

Test(payload_python_alloc, a_block_from_before_attach_is_only_forwarded, .init = setup, .fini = detach)
{
    void *before = w.malloc(w.ctx, 64); /* no session yet */
    pl_session_lock();
    pl_session_begin(1);
    pl_session_unlock();
    uint64_t objs, bytes;
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 0);
    w.free(w.ctx, before);
    cr_expect_eq(fake.mallocs, 1);
    cr_expect_eq(fake.frees, 1);
}

Test(payload_python_alloc, detached_the_wrappers_only_forward, .init = attach, .fini = detach)
{
    void *kept = w.malloc(w.ctx, 32); /* sampled, then the session ends */
    detach();
    void *p = w.malloc(w.ctx, 48);
    p = w.realloc(w.ctx, p, 96);
    void *q = w.calloc(w.ctx, 2, 16);
    w.free(w.ctx, p);
    w.free(w.ctx, q);
    w.free(w.ctx, kept);
    cr_expect_eq(fake.mallocs, 2);
    cr_expect_eq(fake.reallocs, 1);
    cr_expect_eq(fake.callocs, 1);
    cr_expect_eq(fake.frees, 3);
    uint64_t objs, bytes;
    live(HI_KIND_PYMALLOC, &objs, &bytes);
    cr_expect_eq(objs, 1, "detached: nothing counted, not even the free of a sample");
}
