#!/usr/bin/env bash
# cli_exit: the target exits in the middle of a session: heapinject says so,
# Covers: cli/link/client_ticks.c
# writes the report of what it collected, and exits 3.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --steady 4000000 --exit-after 5
"$HEAPINJECT" -p "$TPID" --rate 16K --duration 120 -o "$TMP/out.txt" >/dev/null 2>"$TMP/cli.err"; rc=$?
cat "$TMP/cli.err"
grep -q "exiting" "$TMP/cli_leaky.out" || fail "the target did not exit by itself"
[ "$rc" -eq 3 ] || fail "heapinject exited $rc, want 3 (process exited)"
grep -q "pid $TPID exited during the session" "$TMP/cli.err" || fail "no 'exited' message"
[ -s "$TMP/out.txt" ] || fail "no report written"
head -3 "$TMP/out.txt"
grep -q "^NOTE: as of [0-9.]* s before the process exited" "$TMP/out.txt" || fail "report does not say the process exited"
awk '/^#1 /{f=1;next} /^#2 /{f=0} f' "$TMP/out.txt" | grep -q "leak_steady" ||
    fail "the steady leak is not the first stack: $(head -30 "$TMP/out.txt")"
ok "report written from the last snapshot after the target exited"
