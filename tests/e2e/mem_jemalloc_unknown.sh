#!/usr/bin/env bash
# mem_jemalloc_unknown: status of a jemalloc process (LD_PRELOAD, as redis
# links it). Not attached, it used to print "heap in use 0 B" and "heap
# free 0 B", which read as measured zeros: now "unknown", with jemalloc
# named (found from the malloc slots, as the census's precheck does).
# Attached, jemalloc's fragmentation (active - allocated, redis's
# allocator_frag_ratio) is given, and no trim advice is given for it: a
# purge cannot return free space inside pages that hold blocks (the old
# note offered 'heapinject trim' for it). Checked against the truth: trim
# leaves the fragmented pages resident. The target checks its blocks.
. "$(dirname "$0")/lib.sh"
JE=$(ls /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 2>/dev/null) || skip "no libjemalloc.so.2 (apt-get install libjemalloc2)"
cat >"$TMP/frag.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 200000
static unsigned char *b[N];
static volatile sig_atomic_t check;
static void on_usr1(int s) { (void)s; check = 1; }
int main(void)
{
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < N; i++) { if (!(b[i] = malloc(256))) return 1; memset(b[i], i & 0xff, 256); }
    for (int i = 0; i < N; i += 2) { free(b[i]); b[i] = NULL; } /* every other block: holes in every page */
    printf("ready\n"); fflush(stdout);
    for (;;) {
        pause();
        if (check) {
            int good = 1;
            for (int i = 1; i < N; i += 2)
                for (int k = 0; k < 256; k++) good &= b[i][k] == (i & 0xff);
            check = 0; printf("data %s\n", good ? "ok" : "BAD"); fflush(stdout);
        }
    }
}
C
gcc -O1 -g -o "$TMP/frag" "$TMP/frag.c" || fail "cannot build the target"
LD_PRELOAD=$JE "$TMP/frag" >"$TMP/frag.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/frag.out" ready 20 || fail "the target did not start"
"$HEAPINJECT" status -p "$TPID" >"$TMP/s0.txt" 2>&1; rc=$?
[ "$rc" = 7 ] || fail "status of a process not attached exited $rc: $(cat "$TMP/s0.txt")"
sed -n '/Memory:/,$p' "$TMP/s0.txt"
if grep -Eq 'heap (in use|free) +0 B' "$TMP/s0.txt"; then fail "unknown heap figures shown as 0 B"; fi
grep -Eq '^ +heap in use +unknown +jemalloc' "$TMP/s0.txt" || fail "no 'heap in use unknown' naming jemalloc"
grep -Eq '^ +heap free +unknown +jemalloc' "$TMP/s0.txt" || fail "no 'heap free unknown' naming jemalloc"
grep -q "allocator: jemalloc (libjemalloc.so.2" "$TMP/s0.txt" || fail "the allocator is not named"
"$HEAPINJECT" status -p "$TPID" --format json >"$TMP/s0.json" 2>/dev/null
python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))['memory']['allocator']
sys.exit(0 if a.get('detected') == 'jemalloc' and a['readable'] is False and 'libjemalloc' in a.get('module', '') else 1)" "$TMP/s0.json" ||
    fail "JSON does not name the detected allocator: $(grep -o '"allocator": {[^}]*}' "$TMP/s0.json")"
"$HEAPINJECT" attach -p "$TPID" -q || fail "attach failed"
"$HEAPINJECT" status -p "$TPID" >"$TMP/s1.txt" 2>&1 || fail "status attached failed: $(cat "$TMP/s1.txt")"
sed -n '/Memory:/,/threads:/p' "$TMP/s1.txt"
line=$(grep -E '^ +fragmentation [0-9.]+ [KMG]iB \(active - allocated; ratio [0-9.]+' "$TMP/s1.txt") ||
    fail "no fragmentation line: $(sed -n '/allocator:/,/threads:/p' "$TMP/s1.txt")"
ratio=$(sed -n 's/.*ratio \([0-9.]*\),.*/\1/p' <<<"$line")
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 1.6 else 1)" "$ratio" ||
    fail "half the blocks freed in every page, yet a fragmentation ratio of $ratio"
if grep -q "heapinject trim" "$TMP/s1.txt"; then fail "trim is advised for memory a purge cannot return: $(grep "heapinject trim" "$TMP/s1.txt")"; fi
# The truth: a trim (jemalloc's purge) leaves the fragmented pages resident.
before=$(awk '/^VmRSS/{print $2}' /proc/"$TPID"/status)
"$HEAPINJECT" trim -p "$TPID" >"$TMP/t.txt" 2>&1 || fail "trim failed: $(cat "$TMP/t.txt")"
after=$(awk '/^VmRSS/{print $2}' /proc/"$TPID"/status)
echo "RSS before trim ${before} kB, after ${after} kB"
[ $((before - after)) -lt 12000 ] || fail "trim returned $((before - after)) kB: the fragmentation was returnable after all"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
kill -USR1 "$TPID"
wait_for_line "$TMP/frag.out" '^data ' 20 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/frag.out" || fail "the target's data changed"
assert_alive "$TPID"
ok "jemalloc: unknown shown as unknown with the allocator named; fragmentation $ratio given, no trim advice for it"
