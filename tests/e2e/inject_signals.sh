#!/usr/bin/env bash
# a signal that arrives for the held thread while the injected call runs is
# held back and delivered once the thread is restored: the target's handler
# runs exactly once, its read() restarts (SA_RESTART) and no data is lost.
source "$(dirname "$0")/inject_common.bash"
build_testlib

mkfifo "$TMP/fifo"
exec 3<>"$TMP/fifo"
start_target_stdin "$TMP/fifo" inj_wait pipe "$TMP/got"
echo "before" | tee -a "$TMP/sent" >&3
sleep 0.3
# The injected function sleeps 2.5 s inside the target; SIGUSR1 is sent
# once the call has started (the -v log says so).
"$HEAPINJECT" inject -v -p "$TPID" "$LIB" hi_test_sleep_ms 2500 >"$TMP/inj.out" 2>"$TMP/inj.err" &
IPID=$!
wait_for_line "$TMP/inj.err" 'calling hi_test_sleep_ms' 20 || fail "the call did not start: $(cat "$TMP/inj.err")"
sleep 0.3
kill -USR1 "$TPID"
wait "$IPID"; RC=$?
cat "$TMP/inj.out" "$TMP/inj.err"
expect_rc 0
expect_out '^called hi_test_sleep_ms\("2500"\) = 2500$'
expect_err 'holding signal 10 for thread'
expect_err 'delivering 1 signal'
assert_fine "$TPID"
echo "after" | tee -a "$TMP/sent" >&3
echo END | tee -a "$TMP/sent" >&3
wait_exit "$TPID" 15
[ "$WRC" = 0 ] || fail "target exited with $WRC"
cat "$TMP/inj_wait.out"
cmp "$TMP/sent" "$TMP/got" || fail "data lost across the injection"
grep -q 'eintr=0 usr1=1$' "$TMP/inj_wait.out" || fail "SIGUSR1 not delivered exactly once (or EINTR seen)"
ok "signal held during the call and delivered after restore"
