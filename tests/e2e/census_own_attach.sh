#!/usr/bin/env bash
# census_own_attach: a standalone census injects the profiler for itself,
# and its agent samples for the few seconds the census takes; the report
# used to call what it saw "(~8.1 MiB allocated since attach)", of an
# attach the user never made. Now a census that attached only for itself
# says nothing of "since attach"; with a session attached before it, the
# census still tells what that session sampled. The target checks its
# blocks after.
. "$(dirname "$0")/lib.sh"
cat >"$TMP/churn.c" <<'C'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define N 2000
static unsigned char *ring[N];
static unsigned char tag[N];
static volatile sig_atomic_t check;
static void on_usr1(int s) { (void)s; check = 1; }
int main(void)
{
    signal(SIGUSR1, on_usr1);
    for (int i = 0; i < N; i++) { ring[i] = malloc(4096); memset(ring[i], tag[i] = (unsigned char)i, 4096); }
    printf("ready\n"); fflush(stdout);
    for (unsigned r = 0;; r++) {
        for (int k = 0; k < 50; k++) {
            int i = (int)((r * 50 + k) % N);
            for (int b = 0; b < 4096; b++)
                if (ring[i][b] != tag[i]) { printf("data BAD\n"); fflush(stdout); return 1; }
            free(ring[i]);
            ring[i] = malloc(4096);
            memset(ring[i], ++tag[i], 4096);
        }
        if (check) { check = 0; printf("data ok\n"); fflush(stdout); }
        usleep(1000);
    }
}
C
gcc -O1 -g -o "$TMP/churn" "$TMP/churn.c" || fail "cannot build the target"
"$TMP/churn" >"$TMP/churn.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/churn.out" ready 10 || fail "the target did not start"
"$HEAPINJECT" census -p "$TPID" >"$TMP/own.txt" 2>"$TMP/own.err" || fail "census failed: $(cat "$TMP/own.err")"
grep -q '^Sizes' "$TMP/own.txt" || fail "no sizes table: $(cat "$TMP/own.txt")"
if grep -q 'since attach' "$TMP/own.txt"; then
    fail "a census that attached for itself speaks of 'since attach': $(grep 'since attach' "$TMP/own.txt" | head -3)"
fi
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/own.json" 2>"$TMP/ownj.err" || fail "census --format json failed"
python3 -c "
import json,sys
d=json.load(open(sys.argv[1]))['census']
bad=[s for s in d['sizes'] if s['since_attach_blocks'] or s['since_attach_stack']]
sys.exit(1 if bad else 0)" "$TMP/own.json" || fail "JSON of a census that attached for itself has since-attach figures"
# A session attached by the user: its samples are history worth telling.
"$HEAPINJECT" attach -p "$TPID" --rate 4K -q || fail "attach failed"
"$HEAPINJECT" census -p "$TPID" >"$TMP/sess.txt" 2>"$TMP/sess.err" || fail "census in a session failed: $(cat "$TMP/sess.err")"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
grep -q 'allocated since attach' "$TMP/sess.txt" || fail "a census in the user's session lost 'since attach': $(sed -n '/^Sizes/,/^$/p' "$TMP/sess.txt")"
kill -USR1 "$TPID"
wait_for_line "$TMP/churn.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/churn.out" || fail "the target's data changed"
assert_alive "$TPID"
ok "a census that attached for itself says nothing of 'since attach'; in a session it still does"
