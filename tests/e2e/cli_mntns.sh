#!/usr/bin/env bash
# cli_mntns: a target in its own mount namespace with a private /tmp (like a
# container): the profiler's socket lives in the target's /tmp, and every
# command reaches it through /proc/PID/root; symbols still resolve.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare -m"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m not permitted here"
outside_tmp cli_leaky
unshare -m --propagation private sh -c "mount -t tmpfs tmpfs /tmp && exec '$OUTSIDE_BIN'" \
    >"$TMP/ns.out" 2>"$TMP/ns.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/ns.out" ready 10 || fail "target did not start: $(cat "$TMP/ns.err")"
[ "$(readlink /proc/self/ns/mnt)" != "$(readlink /proc/$TPID/ns/mnt)" ] || fail "target shares our mount namespace"

"$HEAPINJECT" attach -p "$TPID" --rate 16K 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
[ ! -e "/tmp/heapinject-0/$TPID.sock" ] || fail "socket in the cli's /tmp instead of the target's"
[ -S "/proc/$TPID/root/tmp/heapinject-0/$TPID.sock" ] || fail "no socket in the target's /tmp"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>&1 || fail "status: $(cat "$TMP/status.out")"
"$HEAPINJECT" snapshot -p "$TPID" >"$TMP/snap.txt" 2>&1 || fail "snapshot: $(cat "$TMP/snap.txt")"
grep -q "churn_alloc .*cli_leaky.c:[0-9]" "$TMP/snap.txt" || fail "no symbols: $(head -20 "$TMP/snap.txt")"
"$HEAPINJECT" detach -p "$TPID" 2>/dev/null || fail "detach failed"
[ ! -e "/proc/$TPID/root/tmp/heapinject-0/$TPID.sock" ] || fail "socket left after detach"
"$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/oneshot.txt" 2>"$TMP/oneshot.err" || fail "one-shot: $(cat "$TMP/oneshot.err")"
grep -q "churn_alloc" "$TMP/oneshot.txt" || fail "one-shot report lacks churn_alloc"
assert_alive "$TPID"
ok "profiled a process in another mount namespace"
