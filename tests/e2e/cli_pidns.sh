#!/usr/bin/env bash
# cli_pidns: a target in its own pid and mount namespaces with a private
# /tmp and /proc, as in a container (it is pid 1 there). heapinject, outside,
# profiles it by its host pid; a cli killed mid-session still leaves it
# detached within 2 s (the agent cannot watch a pid of another namespace, so
# the ttl and the owner's connection are what end it), and the pid the
# report names is the one the user typed.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare -p"
unshare -pfm --mount-proc true 2>/dev/null || skip "unshare -p not permitted here"
outside_tmp cli_leaky
unshare -pfm --mount-proc --propagation private sh -c "mount -t tmpfs tmpfs /tmp && exec '$OUTSIDE_BIN'" \
    >"$TMP/ns.out" 2>"$TMP/ns.err" &
USH=$!
PIDS+=("$USH")
wait_for_line "$TMP/ns.out" ready 10 || fail "target did not start: $(cat "$TMP/ns.err")"
TPID=$(pgrep -n -f "^$OUTSIDE_BIN") || fail "cannot find the target's host pid"
PIDS+=("$TPID")
[ "$(awk '/^NSpid:/{print $3}' "/proc/$TPID/status")" = 1 ] || fail "target is not pid 1 of its own namespace"

"$HEAPINJECT" -p "$TPID" --duration 1 --rate 16K >"$TMP/oneshot.txt" 2>"$TMP/oneshot.err" ||
    fail "one-shot: $(cat "$TMP/oneshot.err")"
grep -q "churn_alloc .*cli_leaky.c:[0-9]" "$TMP/oneshot.txt" || fail "no symbols: $(head -20 "$TMP/oneshot.txt")"
grep -q "^heapinject: pid $TPID," "$TMP/oneshot.txt" || fail "the report does not name host pid $TPID: $(head -3 "$TMP/oneshot.txt")"

"$HEAPINJECT" -p "$TPID" --duration 120 -o "$TMP/never.txt" >/dev/null 2>"$TMP/cli.err" &
CLI=$!
PIDS+=("$CLI")
wait_for_line "$TMP/cli.err" "attached to pid $TPID" 30 || fail "no 'attached' message: $(cat "$TMP/cli.err")"
sock="/proc/$TPID/root/tmp/heapinject-0/1.sock"
[ -S "$sock" ] || sock=$(ls /proc/"$TPID"/root/tmp/heapinject-0/*.sock 2>/dev/null | head -1)
[ -n "$sock" ] && [ -S "$sock" ] || fail "no socket in the target's /tmp while attached"
kill -KILL "$CLI"
wait "$CLI" 2>/dev/null
gone=0
for _ in $(seq 40); do
    if [ ! -e "$sock" ]; then gone=1; break; fi
    sleep 0.05
done
[ "$gone" = 1 ] || fail "socket $sock still there 2 s after the cli was killed"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>&1; rc=$?
[ "$rc" -eq 7 ] || fail "status after the kill exited $rc, want 7: $(cat "$TMP/status.out")"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "profiled pid 1 of another pid namespace by its host pid; a killed cli left it detached"
