#!/usr/bin/env bash
# cli_kill: SIGKILL the cli in the middle of a session: the profiler in the
# target notices its owner is gone and detaches by itself within 2 s
# (its socket disappears and `status` says not attached).
. "$(dirname "$0")/lib.sh"

start_target cli_leaky
"$HEAPINJECT" -p "$TPID" --duration 120 -o "$TMP/never.txt" >/dev/null 2>"$TMP/cli.err" &
CLI=$!
PIDS+=("$CLI")
wait_for_line "$TMP/cli.err" "attached to pid $TPID" 30 || fail "no 'attached' message: $(cat "$TMP/cli.err")"
sock=$(ls /tmp/heapinject-0/"$TPID".sock /run/user/0/heapinject/"$TPID".sock 2>/dev/null | head -1)
[ -n "$sock" ] || fail "no socket while attached"

kill -KILL "$CLI"
wait "$CLI" 2>/dev/null
killed=$(date +%s%N)
# 2 s is the promise. The agent notices at once (the socket hangs up), so
# even a busy machine is far inside it.
gone=0
for _ in $(seq 40); do
    if [ ! -e "$sock" ]; then gone=1; break; fi
    sleep 0.05
done
took=$(( ($(date +%s%N) - killed) / 1000000 ))
[ "$gone" = 1 ] || fail "socket $sock still there 2 s after the cli was killed"
echo "socket gone ${took} ms after SIGKILL"
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.out" 2>&1; rc=$?
[ "$rc" -eq 7 ] || fail "status after the kill exited $rc, want 7: $(cat "$TMP/status.out")"
[ ! -e "$TMP/never.txt" ] || fail "a killed cli cannot have written a report"
assert_alive "$TPID"
assert_not_traced "$TPID"
# And the process can be profiled again.
"$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/again.txt" 2>/dev/null || fail "a new session after the kill failed"
grep -q "churn_alloc" "$TMP/again.txt" || fail "new session report lacks churn_alloc"
ok "agent detached by itself ${took} ms after its cli was killed"
