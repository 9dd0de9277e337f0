/* cli_memory_breakdown.c - smaps parsing and the split of RSS by holder,
 * on smaps text written here (known truth), with a fake memory reader
 * standing in for /proc/PID/mem. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/memory/breakdown.h"
#include "cli/memory/report.h"
#include "cli/memory/smaps.h"

#define KB(x) ((uint64_t)(x) * 1024u)
#define MB(x) ((uint64_t)(x) << 20)

/* One VMA in smaps format. */
static size_t vma(char *out, size_t len, uint64_t start, uint64_t end, const char *perms, uint64_t inode,
                  const char *path, uint64_t rss_kb)
{
    return (size_t)snprintf(out, len,
                            "%012lx-%012lx %s 00000000 08:01 %lu %s\n"
                            "Size:           %8lu kB\nRss:            %8lu kB\nPss:            %8lu kB\n"
                            "Anonymous:      %8lu kB\nSwap:                  0 kB\nVmFlags: rd wr mr mw me ac\n",
                            (unsigned long)start, (unsigned long)end, perms, (unsigned long)inode, path ? path : "",
                            (unsigned long)((end - start) / 1024), (unsigned long)rss_kb, (unsigned long)rss_kb,
                            inode ? 0ul : (unsigned long)rss_kb);
}

/* Fake target memory: a glibc arena heap_info at ARENA and an mmapped
 * chunk header at CHUNK. */
#define ARENA 0x7f0000000000ull
#define CHUNK 0x7f1000000000ull
static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    (void)ctx;
    memset(buf, 0, len);
    if (addr == ARENA && len >= 32) {
        uint64_t h[4] = { ARENA + 32, 0, MB(8), MB(8) };
        memcpy(buf, h, 32);
        return 0;
    }
    if (addr == CHUNK && len >= 16) {
        uint64_t h[2] = { 0, MB(4) | 2 };
        memcpy(buf, h, 16);
        return 0;
    }
    return -EIO;
}

static void build(struct cli_smaps *s)
{
    static char text[8192];
    size_t n = 0;
    n += vma(text + n, sizeof(text) - n, 0x555500000000, 0x555500010000, "r-xp", 42, "/usr/bin/prog", 64);
    n += vma(text + n, sizeof(text) - n, 0x555500010000, 0x555500011000, "rw-p", 42, "/usr/bin/prog", 4);
    n += vma(text + n, sizeof(text) - n, 0x555510000000, 0x555520000000, "rw-p", 0, "[heap]", 100 * 1024);
    n += vma(text + n, sizeof(text) - n, ARENA, ARENA + MB(8), "rw-p", 0, NULL, 8 * 1024);
    n += vma(text + n, sizeof(text) - n, ARENA + MB(8), ARENA + MB(64), "---p", 0, NULL, 0);
    n += vma(text + n, sizeof(text) - n, CHUNK, CHUNK + MB(4), "rw-p", 0, NULL, 2 * 1024);
    n += vma(text + n, sizeof(text) - n, 0x7f2000000000, 0x7f2000000000 + MB(64), "rw-p", 0, NULL, 64 * 1024);
    n += vma(text + n, sizeof(text) - n, 0x7f3000000000, 0x7f3000001000, "---p", 0, NULL, 0);
    n += vma(text + n, sizeof(text) - n, 0x7f3000001000, 0x7f3000801000, "rw-p", 0, NULL, 40);
    n += vma(text + n, sizeof(text) - n, 0x7f4000000000, 0x7f4000200000, "r-xp", 7, "/usr/lib/libc.so.6", 1024);
    n += vma(text + n, sizeof(text) - n, 0x7f5000000000, 0x7f5000100000, "rw-s", 9, "/dev/shm/x", 512);
    n += vma(text + n, sizeof(text) - n, 0x7ffd00000000, 0x7ffd00021000, "rw-p", 0, "[stack]", 132);
    n += vma(text + n, sizeof(text) - n, 0x7ffd10000000, 0x7ffd10002000, "r-xp", 0, "[vdso]", 8);
    cr_assert_eq(cli_smaps_parse(text, n, s), 0);
}

Test(cli_memory, smaps_parse_reads_every_mapping)
{
    struct cli_smaps s;
    build(&s);
    cr_expect_eq(s.n, 13);
    cr_expect_str_eq(s.v[0].path, "/usr/bin/prog");
    cr_expect_eq(s.v[0].inode, 42);
    cr_expect_str_eq(s.v[2].perms, "rw-p");
    cr_expect_eq(s.v[2].rss, MB(100));
    cr_expect_null(s.v[3].path);
    cr_expect_eq(s.v[12].rss, KB(8));
    cli_smaps_free(&s);
}

Test(cli_memory, smaps_parse_rejects_a_broken_line)
{
    struct cli_smaps s;
    const char *bad = "55550000 r-xp\nRss: 4 kB\n";
    cr_expect_eq(cli_smaps_parse(bad, strlen(bad), &s), -EINVAL);
}

Test(cli_memory, glibc_split_adds_up_and_matches_the_truth)
{
    struct cli_smaps s;
    struct cli_memory m;
    struct hi_alloc_stats a;
    build(&s);
    memset(&a, 0, sizeof(a));
    a.allocator = HI_ALLOC_GLIBC;
    a.fields = HI_AF_IN_USE | HI_AF_FREE | HI_AF_MMAPPED;
    a.in_use = MB(60) + MB(4); /* 60 MiB in the arenas + the 4 MiB mmapped block */
    a.mmapped = MB(4);
    uint64_t sp = 0x7f3000000800 + 0x1000; /* inside the thread stack */
    cr_assert_eq(cli_memory_split(&s, &a, fake_read, NULL, NULL, &sp, 1, &m), 0);
    uint64_t sum = 0;
    for (int i = 0; i < CLI_MEM_NPARTS; i++)
        sum += m.parts[i];
    cr_expect_eq(sum, m.rss);
    cr_expect_eq(m.rss, s.rss);
    /* arenas: [heap] 100 MiB + arena 8 MiB resident = 108; in use 60 of it;
     * mmapped block: 2 MiB resident of 4 (2 MiB never touched). */
    cr_expect_eq(m.parts[CLI_MEM_HEAP_IN_USE], MB(60) + MB(2));
    cr_expect_eq(m.parts[CLI_MEM_HEAP_FREE], MB(48));
    cr_expect_eq(m.untouched, MB(2));
    cr_expect_eq(m.parts[CLI_MEM_MMAP], MB(64));
    cr_expect_eq(m.parts[CLI_MEM_STACKS], KB(132) + KB(40));
    cr_expect_eq(m.parts[CLI_MEM_FILES], KB(64) + KB(4) + MB(1));
    cr_expect_eq(m.parts[CLI_MEM_OTHER], KB(512) + KB(8));
    cr_expect_eq(m.glibc_arenas, 2); /* main_arena and the one whose first heap is at ARENA */
    cr_expect_str_eq(m.top[0].path, "/usr/lib/libc.so.6");
    cli_memory_free(&m);
    cli_smaps_free(&s);
}

Test(cli_memory, unknown_allocator_leaves_anonymous_memory_unplaced)
{
    struct cli_smaps s;
    struct cli_memory m;
    struct hi_alloc_stats a;
    build(&s);
    memset(&a, 0, sizeof(a));
    a.allocator = HI_ALLOC_UNKNOWN;
    a.status = -ENOTSUP;
    cr_assert_eq(cli_memory_split(&s, &a, fake_read, NULL, NULL, NULL, 0, &m), 0);
    cr_expect_eq(m.parts[CLI_MEM_HEAP_IN_USE], 0);
    cr_expect_eq(m.parts[CLI_MEM_MMAP], 0);
    cr_expect_eq(m.parts[CLI_MEM_UNPLACED], MB(100) + MB(8) + MB(2) + MB(64));
    cli_memory_add_notes(&m, NULL);
    cr_expect(m.nnotes >= 1);
    cr_expect(strstr(m.notes[0], "could not be read") != NULL, "%s", m.notes[0]);
    cli_memory_free(&m);
    cli_smaps_free(&s);
}

Test(cli_memory, jemalloc_resident_comes_out_of_the_anonymous_memory)
{
    struct cli_smaps s;
    struct cli_memory m;
    struct hi_alloc_stats a;
    build(&s);
    memset(&a, 0, sizeof(a));
    a.allocator = HI_ALLOC_JEMALLOC;
    a.fields = HI_AF_IN_USE | HI_AF_RESIDENT;
    a.in_use = MB(50);
    a.resident = MB(80);
    cr_assert_eq(cli_memory_split(&s, &a, fake_read, NULL, NULL, NULL, 0, &m), 0);
    cr_expect_eq(m.parts[CLI_MEM_HEAP_IN_USE], MB(50));
    cr_expect_eq(m.parts[CLI_MEM_HEAP_FREE], MB(30));
    /* anonymous: 100 + 8 + 2 + 64 = 174 MiB, 80 of them jemalloc's */
    cr_expect_eq(m.parts[CLI_MEM_MMAP], MB(94));
    cli_memory_free(&m);
    cli_smaps_free(&s);
}

/* Two anonymous rw-p mappings, each above a 4 KiB guard: a pthread stack,
 * its TCB 2368 bytes below its end ({tcb, dtv, self}, tcb == self == its
 * address), and a 2 MiB super page of an allocator that reserves address
 * space and commits it piece by piece (Chromium's PartitionAlloc), all
 * zeros at its top. */
#define TSTACK 0x7f6000001000ull
#define TSTACK_END (TSTACK + MB(8))
#define SUPER 0x7f7000004000ull
static int tcb_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
    (void)ctx;
    memset(buf, 0, len);
    uint64_t tcb = TSTACK_END - 2368;
    if (addr <= tcb && tcb + 24 <= addr + len) {
        uint64_t self[3] = { tcb, 0x1234, tcb };
        memcpy((char *)buf + (tcb - addr), self, sizeof(self));
    }
    return 0;
}

Test(cli_memory, a_guarded_mapping_is_a_stack_only_with_a_tcb_at_its_top)
{
    static char text[4096];
    size_t n = 0;
    struct cli_smaps s;
    struct cli_memory m;
    n += vma(text + n, sizeof(text) - n, TSTACK - KB(4), TSTACK, "---p", 0, NULL, 0);
    n += vma(text + n, sizeof(text) - n, TSTACK, TSTACK_END, "rw-p", 0, NULL, 64);
    n += vma(text + n, sizeof(text) - n, SUPER - KB(4), SUPER, "---p", 0, NULL, 0);
    n += vma(text + n, sizeof(text) - n, SUPER, SUPER + MB(2) - KB(32), "rw-p", 0, NULL, 1900);
    cr_assert_eq(cli_smaps_parse(text, n, &s), 0);
    struct hi_alloc_stats a;
    memset(&a, 0, sizeof(a));
    a.allocator = HI_ALLOC_GLIBC;
    a.fields = HI_AF_IN_USE | HI_AF_FREE;
    cr_assert_eq(cli_memory_split(&s, &a, tcb_read, NULL, NULL, NULL, 0, &m), 0);
    cr_expect_eq(m.parts[CLI_MEM_STACKS], KB(64), "stacks %lu", (unsigned long)m.parts[CLI_MEM_STACKS]);
    cr_expect_eq(m.parts[CLI_MEM_MMAP], KB(1900), "mmap %lu", (unsigned long)m.parts[CLI_MEM_MMAP]);
    cli_memory_free(&m);
    /* Memory that cannot be read: the guard alone decides, as before. */
    cr_assert_eq(cli_memory_split(&s, &a, NULL, NULL, NULL, NULL, 0, &m), 0);
    cr_expect_eq(m.parts[CLI_MEM_STACKS], KB(64) + KB(1900));
    cli_memory_free(&m);
    cli_smaps_free(&s);
}

/* A mapping marked MADV_DONTFORK (VmFlags dc) stays under mmap and is
 * counted apart, with a note naming V8 when node is among the modules. */
Test(cli_memory, dontfork_mappings_are_counted_apart)
{
    static char text[4096];
    size_t n = 0;
    n += vma(text + n, sizeof(text) - n, 0x400000, 0x500000, "r-xp", 42, "/usr/bin/node", 1024);
    n += vma(text + n, sizeof(text) - n, 0x7f2000000000, 0x7f2000000000 + MB(8), "rw-p", 0, NULL, 6 * 1024);
    n += vma(text + n, sizeof(text) - n, 0x7f2100000000, 0x7f2100000000 + MB(4), "rw-p", 0, NULL, 3 * 1024);
    /* the second anonymous mapping is V8's: do-not-fork */
    char *flags = strstr(strstr(text, "7f2100000000-"), "VmFlags: rd wr mr mw me ac");
    cr_assert_not_null(flags);
    memcpy(flags, "VmFlags: rd wr mr mw dc ac", 26);
    struct cli_smaps s;
    struct cli_memory m;
    cr_assert_eq(cli_smaps_parse(text, n, &s), 0);
    cr_assert(!s.v[1].dontfork);
    cr_assert(s.v[2].dontfork);
    cr_assert_eq(cli_memory_split(&s, NULL, fake_read, NULL, NULL, NULL, 0, &m), 0);
    cr_expect_eq(m.mmap_dontfork, MB(3));
    cli_memory_add_notes(&m, NULL);
    bool said = false;
    for (size_t i = 0; i < m.nnotes; i++)
        said |= strstr(m.notes[i], "3.0 MiB under") && strstr(m.notes[i], "MADV_DONTFORK") && strstr(m.notes[i], "V8");
    cr_expect(said, "no note about the do-not-fork memory");
    cli_memory_free(&m);
    cli_smaps_free(&s);
}

/* The JSON object written by cli_memory_write_json reads back the same. */
Test(cli_memory, json_round_trip)
{
    struct cli_smaps s;
    struct cli_memory m, *back = NULL;
    struct hi_alloc_stats a;
    build(&s);
    memset(&a, 0, sizeof(a));
    a.allocator = HI_ALLOC_JEMALLOC;
    a.fields = HI_AF_IN_USE | HI_AF_RESIDENT | HI_AF_RETAINED;
    a.in_use = MB(50);
    a.resident = MB(80);
    a.retained = MB(7);
    cr_assert_eq(cli_memory_split(&s, &a, fake_read, NULL, NULL, NULL, 0, &m), 0);
    cli_memory_note(&m, "a \"quoted\" note");
    char *buf = NULL, *buf2 = NULL;
    size_t len = 0, len2 = 0;
    FILE *f = open_memstream(&buf, &len);
    cli_memory_write_json(&m, "", f);
    fclose(f);
    json_t *d;
    char why[128] = "";
    cr_assert_eq(cli_json_value_parse(buf, len, &d, why, sizeof(why)), 0, "%s: %s", why, buf);
    cr_assert_eq(cli_memory_from_json(d, &back, why, sizeof(why)), 0, "%s", why);
    cr_assert_not_null(back);
    cr_expect_eq(back->parts[CLI_MEM_MMAP], MB(94));
    cr_expect_eq(back->alloc.allocator, HI_ALLOC_JEMALLOC);
    cr_expect_eq(back->alloc.retained, MB(7));
    cr_expect_str_eq(back->notes[0], "a \"quoted\" note");
    f = open_memstream(&buf2, &len2);
    cli_memory_write_json(back, "", f);
    fclose(f);
    cr_expect_str_eq(buf2, buf);
    json_decref(d);
    cli_memory_destroy(back);
    free(buf);
    free(buf2);
    cli_memory_free(&m);
    cli_smaps_free(&s);
}
