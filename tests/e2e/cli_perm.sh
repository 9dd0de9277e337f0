#!/usr/bin/env bash
# cli_perm: another user cannot talk to the profiler of root's process, and
# is told why; the profiler keeps serving its owner.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root to start a second user"
command -v setpriv >/dev/null || skip "no setpriv"
start_target cli_leaky
"$HEAPINJECT" attach -p "$TPID" 2>/dev/null || fail "attach failed"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$HEAPINJECT" "$@"; }

as_nobody snapshot -p "$TPID" >/dev/null 2>"$TMP/snap.err"; rc=$?
cat "$TMP/snap.err"
[ "$rc" -eq 4 ] || fail "snapshot as nobody exited $rc, want 4 (permission denied)"
grep -q "permission denied" "$TMP/snap.err" || fail "no 'permission denied' message"
grep -q "run heapinject as that user or as root" "$TMP/snap.err" || fail "no advice"
as_nobody detach -p "$TPID" 2>/dev/null; rc=$?
[ "$rc" -eq 4 ] || fail "detach as nobody exited $rc, want 4"
as_nobody -p "$TPID" --duration 1 >/dev/null 2>"$TMP/oneshot.err"; rc=$?
[ "$rc" -eq 4 ] || fail "one-shot as nobody on root's process exited $rc, want 4: $(cat "$TMP/oneshot.err")"

"$HEAPINJECT" status -p "$TPID" >/dev/null 2>&1 || fail "the owner lost the profiler"
"$HEAPINJECT" detach -p "$TPID" 2>/dev/null || fail "detach by the owner failed"
assert_alive "$TPID"
ok "second user refused with a clear message"
