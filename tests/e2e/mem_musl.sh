#!/usr/bin/env bash
# mem_musl: status of musl programs, dynamic and static, each holding
# 3000 blocks of 32 KiB (94 MiB). The dynamic one's heap used to be "mmap
# ... not the allocator's" with no word of musl; the static one's "heap
# 93.8 MiB" sat beside a note that its heap was counted under mmap (as "a
# statically linked jemalloc, tcmalloc or similar"). Both now count it as
# heap, name musl's malloc, and say nothing of another allocator. The
# programs check their blocks after.
. "$(dirname "$0")/lib.sh"
command -v musl-gcc >/dev/null || skip "musl-gcc (musl-tools) is not installed"
cat >"$TMP/m.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 3000
static unsigned char *keep[N];
static volatile sig_atomic_t check;
static void on_usr1(int s) { (void)s; check = 1; }
int main(void)
{
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < N; i++) { if (!(keep[i] = malloc(32768))) return 1; memset(keep[i], i & 0xff, 32768); }
    printf("ready\n"); fflush(stdout);
    for (;;) {
        pause();
        if (check) {
            int good = 1;
            for (int i = 0; i < N; i++) for (int k = 0; k < 32768; k++) good &= keep[i][k] == (i & 0xff);
            check = 0; printf("data %s\n", good ? "ok" : "BAD"); fflush(stdout);
        }
    }
}
C
musl-gcc -O1 -o "$TMP/dyn" "$TMP/m.c" || fail "musl-gcc failed"
musl-gcc -O1 -static -o "$TMP/sta" "$TMP/m.c" || fail "musl-gcc -static failed"
for kind in dyn sta; do
    "$TMP/$kind" >"$TMP/$kind.out" 2>&1 &
    P=$!; PIDS+=("$P")
    wait_for_line "$TMP/$kind.out" ready 20 || fail "the $kind musl program did not start"
    "$HEAPINJECT" status -p "$P" >"$TMP/$kind.txt" 2>&1
    sed -n '/Memory:/,$p' "$TMP/$kind.txt"
    heap=$(awk '$1 == "heap" && $3 == "MiB" {print int($2)}' "$TMP/$kind.txt")
    [ -n "$heap" ] && [ "$heap" -ge 90 ] || fail "$kind: the 94 MiB of blocks are not counted as heap: $(sed -n '/Memory:/,$p' "$TMP/$kind.txt")"
    grep -Eq '^ +mmap +([0-9.]+ KiB|0 B|[0-3]\.[0-9] MiB) ' "$TMP/$kind.txt" || fail "$kind: mmap holds the heap: $(grep ' mmap ' "$TMP/$kind.txt")"
    grep -q "allocator: musl's malloc" "$TMP/$kind.txt" || fail "$kind: musl is not named as the allocator"
    if grep -Eq 'jemalloc, tcmalloc|counted under mmap' "$TMP/$kind.txt"; then fail "$kind: another allocator or an mmap count is said"; fi
    kill -USR1 "$P"
    wait_for_line "$TMP/$kind.out" '^data ' 20 || fail "$kind: the program did not check its data"
    grep -q '^data ok' "$TMP/$kind.out" || fail "$kind: the program's data changed"
    assert_alive "$P"
done
ok "musl, dynamic and static: its heap counted as heap, musl's malloc named"
