#!/usr/bin/env bash
# cli_errors: what a user sees for common mistakes: no such process, bad
# Covers: cli/cmd/attach.c, cli/cmd/main.c, cli/link/attach.c, cli/link/last_snapshot.c
# options, a profiler whose socket was removed.
. "$(dirname "$0")/lib.sh"
H=$HEAPINJECT

"$H" -p 999999999 --duration 1 >/dev/null 2>"$TMP/e1"; rc=$?
[ "$rc" -eq 2 ] || [ "$rc" -eq 3 ] || fail "bad pid: exit $rc"
# A pid that surely does not exist right now.
nopid=$( (sleep 0 & echo $!) ); wait 2>/dev/null
"$H" -p "$nopid" --duration 1 >/dev/null 2>"$TMP/e2"; rc=$?
[ "$rc" -eq 3 ] || fail "gone pid: exit $rc, want 3: $(cat "$TMP/e2")"
"$H" snapshot -p "$nopid" >/dev/null 2>"$TMP/e3"; rc=$?
[ "$rc" -eq 3 ] || fail "snapshot of a gone pid: exit $rc, want 3"
grep -q "no such process" "$TMP/e3" || fail "message: $(cat "$TMP/e3")"

# A kernel thread: no program and no memory to split; every command that
# would look says so, exit 3. (kthreadd is missing in a pid namespace.)
kt=$(pgrep -x kthreadd | head -1)
if [ -n "$kt" ]; then
    for cmd in "status -p $kt" "census -p $kt" "-p $kt --duration 1"; do
        "$H" $cmd >/dev/null 2>"$TMP/ek"; rc=$?
        [ "$rc" -eq 3 ] || fail "heapinject $cmd (a kernel thread): exit $rc, want 3: $(cat "$TMP/ek")"
        grep -q "kernel thread" "$TMP/ek" || fail "heapinject $cmd (a kernel thread): $(cat "$TMP/ek")"
    done
else
    echo "(no kthreadd visible: kernel-thread case skipped)"
fi

"$H" -p 1 --rate lots 2>"$TMP/e4"; rc=$?
[ "$rc" -eq 2 ] || fail "bad --rate: exit $rc, want 2"
grep -q "is not a byte count" "$TMP/e4" || fail "message: $(cat "$TMP/e4")"
"$H" frobnicate 2>/dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "unknown command: exit $rc"
"$H" detach -p 1 --leaks 2>"$TMP/e5"; rc=$?
[ "$rc" -eq 2 ] || fail "option of another command: exit $rc"
grep -q "does not apply" "$TMP/e5" || fail "message: $(cat "$TMP/e5")"
for c in attach status snapshot detach; do
    "$H" $c --help | grep -q "usage: heapinject $c" || fail "$c --help"
done
"$H" --help | grep -q "usage: heapinject -p PID" || fail "--help"

# Socket gone: the profiler runs but cannot be reached.
start_target cli_leaky
"$H" attach -p "$TPID" --ttl 3 2>/dev/null || fail "attach failed"
sock=$(ls /tmp/heapinject-0/"$TPID".sock /run/user/0/heapinject/"$TPID".sock 2>/dev/null | head -1)
rm -f "$sock"
"$H" snapshot -p "$TPID" >/dev/null 2>"$TMP/e6"; rc=$?
[ "$rc" -eq 7 ] || fail "snapshot without socket: exit $rc, want 7"
grep -q "not attached (no profiler socket at $sock)" "$TMP/e6" || fail "message: $(cat "$TMP/e6")"
"$H" -p "$TPID" --duration 1 >/dev/null 2>"$TMP/e7"; rc=$?
[ "$rc" -eq 6 ] || fail "one-shot with an unreachable profiler: exit $rc, want 6: $(cat "$TMP/e7")"
grep -q "already attached" "$TMP/e7" || fail "message: $(cat "$TMP/e7")"
# The time-to-live ends it; then a session works again.
for _ in $(seq 100); do
    "$H" -p "$TPID" --duration 0.5 -q >"$TMP/r.txt" 2>/dev/null && break
    sleep 0.1
done
grep -q "churn_alloc" "$TMP/r.txt" || fail "no session after the time-to-live ended"
assert_alive "$TPID"
ok "errors are clear and exit codes right"
