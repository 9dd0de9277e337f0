#!/usr/bin/env bash
# cli_nothing_live: a process that frees every block it allocates, profiled
# with --leaks. The report says in words that nothing is live, instead of
# tables of "0 B" rows (the functions table used to list every frame of
# the freed stacks at 0 B, 0.0%).
. "$(dirname "$0")/lib.sh"
cat >"$TMP/f.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
void *volatile sink;
int main(void)
{
    printf("ready\n");
    fflush(stdout);
    for (;;) {
        for (int i = 0; i < 100; i++) {
            sink = malloc(1000);
            free(sink);
        }
        usleep(1000);
    }
}
C
gcc -O1 -g -o "$TMP/f" "$TMP/f.c" || fail "cannot build the target"
"$TMP/f" >"$TMP/f.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/f.out" ready 10 || fail "the target did not start"
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --rate 1K --duration 1.5 --leaks >"$TMP/r.txt" 2>"$TMP/r.err" ||
    fail "the session failed: $(cat "$TMP/r.err")"
grep -q '^Leak candidates: none; every block sampled since attach was freed' "$TMP/r.txt" ||
    fail "no plain 'none' for the leak candidates: $(sed -n '/Leak/,$p' "$TMP/r.txt")"
grep -q '^Functions by live bytes: none' "$TMP/r.txt" || fail "the functions table is not replaced by 'none': $(sed -n '/Functions/,$p' "$TMP/r.txt")"
if grep -Eq '^ +0 B +0\.0%' "$TMP/r.txt"; then fail "rows of 0 B are printed: $(grep -E '^ +0 B' "$TMP/r.txt" | head -3)"; fi
grep -Eq 'estimated from [1-9][0-9]* samples?' "$TMP/r.txt" || fail "nothing was sampled at all: $(head -5 "$TMP/r.txt")"
ok "nothing live: the report says so in words, no 0 B tables"
