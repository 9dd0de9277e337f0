/* payload_serve_snapshot.c - snapshot encoding (payload/serve/snapshot.c):
 * the records a snapshot streams for known tables, their order, a bucket's
 * counters and PCs as the wire carries them (the kind trailer only for a
 * bucket that is not malloc's), and a send error that ends the stream. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "payload/record/addrmap.h"
#include "payload/record/bucket.h"
#include "payload/record/maptrack.h"
#include "payload/record/sample.h"
#include "payload/record/stack.h"
#include "payload/record/thread.h"
#include "payload/serve/snapshot.h"

#define MAX_RECORDS 4096
#define BODY_KEEP 2048

struct record {
    uint16_t type;
    uint32_t len;
    unsigned char body[BODY_KEEP];
};

static struct record records[MAX_RECORDS];
static unsigned nrecords;
static unsigned fail_at; /* 1-based record whose send fails; 0: none */

static int capture(void *ctx, uint16_t type, const void *body, uint32_t len)
{
    (void)ctx;
    if (nrecords >= MAX_RECORDS)
        return -ENOSPC;
    if (fail_at && nrecords + 1 == fail_at)
        return -EPIPE;
    struct record *r = &records[nrecords++];
    r->type = type;
    r->len = len;
    memcpy(r->body, body, len < BODY_KEEP ? len : BODY_KEEP);
    return 0;
}

static const uintptr_t stack_a[3] = { 0x401000, 0x402000, 0x403000 };
static const uintptr_t stack_b[2] = { 0x501000, 0x502000 };

static void setup(void)
{
    cr_assert_eq(pl_thread_init(), 0);
    cr_assert_eq(pl_bucket_init(), 0);
    cr_assert_eq(pl_addrmap_init(), 0);
    cr_assert_eq(pl_maptrack_init(), 0);
    cr_assert_eq(pl_snapshot_init(), 0);
    pl_bucket_reset();
    pl_addrmap_reset();
    pl_maptrack_reset();
    nrecords = 0;
    fail_at = 0;
    int32_t a = pl_bucket_intern(pl_stack_hash(stack_a, 3), stack_a, 3, 7);
    int32_t b = pl_bucket_intern_kind(pl_stack_hash(stack_b, 2), stack_b, 2, 8, HI_KIND_MMAP);
    cr_assert(a == 0 && b == 1);
    pl_bucket_add(a, 100, 1000, 0, 1);
    pl_bucket_add(a, 50, 500, 0, 0);
    pl_bucket_add(b, 4096, 8192, 0, 1);
}

static int rank(uint16_t type)
{
    switch (type) {
    case HI_MSG_SNAP_BEGIN: return 0;
    case HI_MSG_SNAP_THREAD: return 1;
    case HI_MSG_SNAP_HIST: return 2;
    case HI_MSG_SNAP_MMAP: return 3;
    case HI_MSG_SNAP_BUCKET: return 4;
    case HI_MSG_SNAP_MAPS: return 5;
    case HI_MSG_SNAP_END: return 6;
    default: return -1;
    }
}

Test(payload_serve_snapshot, records_in_order_with_the_tables_contents, .init = setup)
{
    cr_assert_eq(pl_snapshot_send(capture, NULL), 0);
    cr_assert_geq(nrecords, 5u);
    cr_assert_eq(records[0].type, HI_MSG_SNAP_BEGIN);
    struct hi_snap_begin begin;
    memcpy(&begin, records[0].body, sizeof(begin));
    cr_expect_eq(begin.nbuckets, 2u);
    cr_expect_eq(records[nrecords - 1].type, HI_MSG_SNAP_END);
    struct hi_snap_end end;
    memcpy(&end, records[nrecords - 1].body, sizeof(end));
    cr_expect_eq(end.buckets_sent, 2u);

    unsigned buckets = 0, maps = 0;
    int last = -1;
    for (unsigned i = 0; i < nrecords; i++) {
        int r = rank(records[i].type);
        cr_assert_geq(r, 0, "record %u: unexpected type %u", i, records[i].type);
        cr_expect_geq(r, last, "record %u (type %u) out of order", i, records[i].type);
        last = r;
        maps += records[i].type == HI_MSG_SNAP_MAPS;
        if (records[i].type != HI_MSG_SNAP_BUCKET)
            continue;
        struct hi_snap_bucket sb;
        memcpy(&sb, records[i].body, sizeof(sb));
        const unsigned char *pcs = records[i].body + sizeof(sb);
        if (buckets == 0) {
            cr_expect_eq(sb.nframes, 3u);
            cr_expect_eq(records[i].len, sizeof(sb) + 3 * sizeof(uint64_t)); /* malloc: no trailer */
            for (unsigned f = 0; f < 3; f++) {
                uint64_t pc;
                memcpy(&pc, pcs + f * sizeof(pc), sizeof(pc));
                cr_expect_eq(pc, stack_a[f]);
            }
            cr_expect_eq(sb.raw_live_bytes, 100u);
            cr_expect_eq(sb.raw_live_objects, 1u);
            cr_expect_eq(sb.raw_alloc_bytes, 150u);
            cr_expect_eq(sb.raw_alloc_objects, 2u);
            cr_expect_eq(sb.est_live_bytes, 1000u);
            cr_expect_eq(sb.est_alloc_bytes, 1500u);
            cr_expect_eq(sb.first_tid, 7);
        } else {
            cr_expect_eq(sb.nframes, 2u);
            cr_expect_eq(records[i].len, sizeof(sb) + 2 * sizeof(uint64_t) + sizeof(struct hi_snap_bucket_ext));
            struct hi_snap_bucket_ext ext;
            memcpy(&ext, pcs + 2 * sizeof(uint64_t), sizeof(ext));
            cr_expect_eq(ext.kind, (uint32_t)HI_KIND_MMAP);
            cr_expect_eq(sb.raw_live_bytes, 4096u);
            cr_expect_eq(sb.est_live_bytes, 8192u);
            cr_expect_eq(sb.first_tid, 8);
        }
        buckets++;
    }
    cr_expect_eq(buckets, 2u);
    cr_expect_geq(maps, 1u); /* the process's own maps: at least one record */
}

Test(payload_serve_snapshot, a_send_error_ends_the_stream, .init = setup)
{
    fail_at = 2;
    cr_expect_eq(pl_snapshot_send(capture, NULL), -EPIPE);
    cr_expect_eq(nrecords, 1u);
    cr_expect_eq(records[0].type, HI_MSG_SNAP_BEGIN);
}
