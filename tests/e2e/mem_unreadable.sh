#!/usr/bin/env bash
# mem_unreadable: a process whose malloc is an allocator heapinject cannot
# read (a small bump allocator over mmap, preloaded: its own malloc, none of
# the statistics calls): the report says the figures could not be read and
# why, the anonymous memory is shown as "unplaced" rather than guessed,
# `trim` says there is no such call, exits 5 and leaves the process alone;
# the program's data stays intact. (glibc's libc_malloc_debug.so is no such
# case: it wraps glibc's own malloc, whose figures are then read.)
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

cat >"$TMP/bump.c" <<'C'
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#define CHUNK (256ul << 20)
static char *cur, *end;
static int lock;
static void *bump(size_t n, size_t align)
{
    if (align < 16) align = 16;
    while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) {}
    uintptr_t p = ((uintptr_t)cur + 16 + align - 1) & ~(uintptr_t)(align - 1);
    if (!cur || p + n > (uintptr_t)end) {
        char *m = mmap(0, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED || n > CHUNK - 4096) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); return 0; }
        cur = m; end = m + CHUNK;
        p = ((uintptr_t)cur + 16 + align - 1) & ~(uintptr_t)(align - 1);
    }
    ((size_t *)p)[-1] = n;
    cur = (char *)(p + n);
    __atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
    return (void *)p;
}
void *malloc(size_t n) { return bump(n, 16); }
void free(void *p) { (void)p; }
void *calloc(size_t a, size_t b) { return bump(a * b, 16); } /* fresh mmap pages are zero */
size_t malloc_usable_size(void *p) { return p ? ((size_t *)p)[-1] : 0; }
void *realloc(void *p, size_t n)
{
    void *q = bump(n, 16);
    if (q && p) { size_t o = malloc_usable_size(p); memcpy(q, p, o < n ? o : n); }
    return q;
}
void *memalign(size_t a, size_t n) { return bump(n, a); }
void *aligned_alloc(size_t a, size_t n) { return bump(n, a); }
int posix_memalign(void **r, size_t a, size_t n) { *r = bump(n, a); return *r ? 0 : ENOMEM; }
void *valloc(size_t n) { return bump(n, 4096); }
C
cc -O1 -shared -fPIC -o "$TMP/libbump.so" "$TMP/bump.c" || fail "cannot build the test allocator"
start_mem_truth "LD_PRELOAD=$TMP/libbump.so" -- --inuse 20 --freed 20 --mmap 8
"$HEAPINJECT" -p "$TPID" --duration 1 --format json -o "$TMP/out.json" 2>"$TMP/cli.err" || fail "heapinject -p: $(cat "$TMP/cli.err")"
check_memory "$TMP/out.json" memory "$(vmrss_bytes "$TPID")" allocator=unknown readable=false || fail "breakdown"
python3 - "$TMP/out.json" <<'PY' || fail "unreadable allocator not explained"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert "libbump" in m["allocator"]["module"], m["allocator"]
assert m["allocator"]["why"], m["allocator"]
assert m["parts"]["unplaced"] > 40 * 2**20, m["parts"]
assert m["parts"]["heap_in_use"] == 0 and m["parts"]["heap_free"] == 0, m["parts"]
assert any("could not be read" in n for n in m["notes"]), m["notes"]
PY
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim.out" 2>&1; rc=$?
cat "$TMP/trim.out"
[ "$rc" -eq 5 ] || fail "trim of an allocator without a trim call: exit $rc, want 5"
grep -q "no call that returns free memory; nothing was done" "$TMP/trim.out" || fail "trim message unclear"
sleep 0.3
assert_alive "$TPID"
assert_not_traced "$TPID"
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 10 || fail "the program did not verify its data"
grep -q "^verify ok" "$TMP/mem_truth.out" || fail "data damaged"
ok "unreadable allocator said so, unplaced shown, trim refused, no harm"
