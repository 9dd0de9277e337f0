/* payload_interpose_hooks.c - the hooks a patched slot calls
 * (payload/interpose/hooks.c), called as a patched slot would call them:
 * each returns the allocator's own result, and while a session runs at
 * rate 1 every block is sampled into the address map and a bucket and
 * leaves both when freed; detached, the hooks only forward. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "payload/interpose/family.h"
#include "payload/record/addrmap.h"
#include "payload/record/bucket.h"
#include "payload/record/maptrack.h"
#include "payload/record/session.h"
#include "payload/record/stack.h"
#include "payload/record/thread.h"

static void *(*hook_malloc)(size_t);
static void *(*hook_calloc)(size_t, size_t);
static void *(*hook_realloc)(void *, size_t);
static void (*hook_free)(void *);

static void bind(int f, unsigned func, void *orig)
{
    cr_assert_eq(pl_family_bind(f, func, orig), 0);
}

static void setup(void)
{
    cr_assert_eq(pl_thread_init(), 0);
    cr_assert_eq(pl_bucket_init(), 0);
    cr_assert_eq(pl_addrmap_init(), 0);
    cr_assert_eq(pl_maptrack_init(), 0);
    cr_assert_eq(pl_stack_init(), 0);
    pl_bucket_reset();
    pl_addrmap_reset();
    Dl_info di;
    cr_assert(dladdr((void *)malloc, &di) != 0);
    int f = pl_family_get((uintptr_t)di.dli_fbase);
    cr_assert_geq(f, 0);
    bind(f, PL_F_MALLOC, (void *)malloc);
    bind(f, PL_F_CALLOC, (void *)calloc);
    bind(f, PL_F_REALLOC, (void *)realloc);
    bind(f, PL_F_FREE, (void *)free);
    hook_malloc = (void *(*)(size_t))pl_hook_addr(f, PL_F_MALLOC);
    hook_calloc = (void *(*)(size_t, size_t))pl_hook_addr(f, PL_F_CALLOC);
    hook_realloc = (void *(*)(void *, size_t))pl_hook_addr(f, PL_F_REALLOC);
    hook_free = (void (*)(void *))pl_hook_addr(f, PL_F_FREE);
    cr_assert(hook_malloc && hook_calloc && hook_realloc && hook_free);
    cr_assert_neq((void *)hook_malloc, (void *)malloc);
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

/* Live sampled objects and bytes over every bucket. */
static void live(uint64_t *objs, uint64_t *bytes)
{
    *objs = *bytes = 0;
    for (uint32_t i = 0; i < pl_bucket_count(); i++) {
        const struct pl_bucket *b = pl_bucket_at(i);
        *objs += b->raw_live_objs;
        *bytes += b->raw_live_bytes;
    }
}

Test(payload_interpose_hooks, sampled_while_attached_and_gone_when_freed, .init = attach, .fini = detach)
{
    uint64_t objs, bytes;
    char *p = hook_malloc(100);
    cr_assert_not_null(p);
    memset(p, 0xab, 100); /* the target's memory is whole */
    cr_expect_eq(pl_addrmap_count(), 1u);
    cr_expect_geq(pl_bucket_count(), 1u);
    live(&objs, &bytes);
    cr_expect_eq(objs, 1u);
    cr_expect_geq(bytes, 100u);

    char *z = hook_calloc(50, 4);
    cr_assert_not_null(z);
    for (int i = 0; i < 200; i++)
        cr_assert_eq(z[i], 0, "calloc's block is zeroed");
    cr_expect_eq(pl_addrmap_count(), 2u);

    /* realloc to a size that moves the block: the new pointer is the live
     * one, the old one is gone, the content came along. */
    char *q = hook_realloc(p, 1u << 20);
    cr_assert_not_null(q);
    cr_expect_eq((unsigned char)q[99], 0xab);
    cr_expect_eq(pl_addrmap_count(), 2u);
    live(&objs, &bytes);
    cr_expect_eq(objs, 2u);
    cr_expect_geq(bytes, (1u << 20) + 200u);

    hook_free(q);
    hook_free(z);
    cr_expect_eq(pl_addrmap_count(), 0u);
    live(&objs, &bytes);
    cr_expect_eq(objs, 0u);
    cr_expect_eq(bytes, 0u);
    hook_free(NULL); /* as free(NULL): nothing */
}

Test(payload_interpose_hooks, detached_hooks_only_forward, .init = setup)
{
    cr_assert_eq(pl_key_load(), PL_KEY_OFF);
    char *p = hook_malloc(100);
    cr_assert_not_null(p);
    memset(p, 1, 100);
    p = hook_realloc(p, 5000);
    cr_assert_not_null(p);
    cr_expect_eq(p[99], 1);
    cr_expect_eq(pl_addrmap_count(), 0u);
    cr_expect_eq(pl_bucket_count(), 0u);
    hook_free(p);
}
