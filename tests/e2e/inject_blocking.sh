#!/usr/bin/env bash
# inject into threads in other states: epoll_wait, pthread_cond_wait, a busy
# computation (integer, SSE and x87 registers live), and a process whose main
# thread never reaches a safe point (a signal handler that interrupted fork())
# but whose second thread does, a main thread that lives in a signal handler
# that interrupted plain code (injected there), one whose handler runs on an
# alternate signal stack (refused), one whose main thread has exited, and one
# stopped by SIGSTOP.
# Each target then behaves exactly as it would have without us.
source "$(dirname "$0")/inject_common.bash"
build_testlib

# --- epoll_wait ---------------------------------------------------------
mkfifo "$TMP/efifo"
exec 3<>"$TMP/efifo"
start_target_stdin "$TMP/efifo" inj_wait epoll
echo "first" >&3
wait_for_line "$TMP/inj_wait.out" "epoll got first" 10 || fail "epoll target did not see data"
sleep 0.2
inject -p "$TPID" "$LIB" hi_test_strlen "epoll"
expect_rc 0
expect_out '^called hi_test_strlen\("epoll"\) = 5$'
assert_fine "$TPID"
echo "second" >&3
wait_for_line "$TMP/inj_wait.out" "epoll got second" 10 || fail "epoll target missed data after the injection"
echo "END" >&3
wait_exit "$TPID" 15
exec 3>&-
cat "$TMP/inj_wait.out"
[ "$WRC" = 0 ] || fail "epoll target exited with $WRC"
grep -q '^epoll got second$' "$TMP/inj_wait.out" || fail "epoll missed data after the injection"
grep -q '^epoll wakeups=3 eintr=0$' "$TMP/inj_wait.out" || fail "epoll_wait woke spuriously or saw EINTR"
ok "epoll_wait"

# --- pthread_cond_wait ----------------------------------------------------
mkfifo "$TMP/cfifo"
exec 3<>"$TMP/cfifo"
start_target_stdin "$TMP/cfifo" inj_wait condwait
sleep 0.3
inject -p "$TPID" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
assert_fine "$TPID"
echo "wake up" >&3
wait_exit "$TPID" 15
exec 3>&-
cat "$TMP/inj_wait.out"
[ "$WRC" = 0 ] || fail "condwait target exited with $WRC"
grep -q '^woke with wake up$' "$TMP/inj_wait.out" || fail "condwait target lost its wakeup"
grep -q '^cond wakeups=1$' "$TMP/inj_wait.out" || fail "pthread_cond_wait returned spuriously"
ok "pthread_cond_wait"

# --- busy loop ------------------------------------------------------------
start_target inj_wait busy 120 "$TMP/busy.stop"
for i in 1 2 3 4 5; do
    inject -p "$TPID" "$LIB" hi_test_float "dirty the FP registers"
    expect_rc 0
    expect_out '^called hi_test_float\("dirty the FP registers"\) = 2$'
    assert_fine "$TPID"
    sleep 0.2
done
touch "$TMP/busy.stop"
wait_exit "$TPID" 20
cat "$TMP/inj_wait.out"
[ "$WRC" = 0 ] || fail "busy target exited with $WRC"
grep -Eq '^busy rounds=[1-9][0-9]* mismatches=0$' "$TMP/inj_wait.out" || fail "busy computation went wrong"
ok "busy loop: same result in every round"

# --- main thread never safe: another thread is used ------------------------
# Its SIGUSR1 handler interrupted fork() (raised by an atfork handler): the
# walk goes through the handler's frame and finds fork below it.
start_target inj_wait sighandler --thread --in-fork
inject -v -p "$TPID" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
expect_err "thread $TPID is inside [_a-z]*fork"
used=$(sed -n 's/.*thread \([0-9]*\) is at a safe point.*/\1/p' "$TMP/inj.err")
[ -n "$used" ] && [ "$used" != "$TPID" ] || fail "expected a thread other than main, used '$used'"
assert_fine "$TPID"
assert_not_traced "$used"
ok "main thread in a signal handler that interrupted fork: injected through thread $used"

# --- a process that lives in a signal handler (PostgreSQL's walwriter) ------
# Its only thread runs in a SIGUSR1 handler that interrupted raise(), for
# good: the code below the handler's frame holds no lock, so that thread is
# a safe point (before, every attempt was refused until the timeout).
start_target inj_wait sighandler
t0=$(date +%s%N)
inject -v -p "$TPID" --timeout 3000 "$LIB" hi_test_getpid
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
expect_err "thread $TPID is at a safe point \(attempt 1\).*through a signal handler's frame"
assert_fine "$TPID"
ok "thread inside a handler that interrupted plain code: injected there at the first attempt ($ms ms)"
if command -v gdb >/dev/null; then
    # gdb's walk (its SIGTRAMP_FRAME) follows the same rule.
    inject --via gdb -p "$TPID" --timeout 20000 "$LIB" hi_test_getpid
    expect_rc 0
    expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
    assert_fine "$TPID"
    ok "the same through gdb"
fi

# --- a handler on an alternate signal stack: refused as such ----------------
# The injected call would run on that stack (64 KiB here, often 8 KiB).
start_target inj_wait sighandler --altstack
inject -p "$TPID" --timeout 700 "$LIB" hi_test_getpid
expect_rc 8
expect_err "thread $TPID is running a signal handler on its alternate signal stack \(frame #[0-9]+; 65536 bytes\)"
assert_fine "$TPID"
assert_not_loaded "$TPID" "$LIB"
ok "handler on an alternate signal stack: refused, target unchanged"

# --- main thread exited (zombie leader), another thread sleeps -------------------
start_target inj_wait mainexit 4
sleep 0.3
inject -p "$TPID" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
assert_not_traced "$TPID"
wait_exit "$TPID" 15
cat "$TMP/inj_wait.out"
[ "$WRC" = 0 ] || fail "mainexit target exited with $WRC"
grep -Eq '^slept 4\.[0-9]+ rc=0 errno=0$' "$TMP/inj_wait.out" || fail "the sleeping thread was disturbed"
ok "exited main thread: injected through the live one"

# --- stopped with SIGSTOP: refused, stays stopped, resumes normally ----------------
# A stopped process cannot run the payload's agent (issue 12): the injector
# refuses before any ptrace call and says so, leaving it stopped.
start_target inj_wait nanosleep 2
kill -STOP "$TPID"
sleep 0.2
inject -p "$TPID" "$LIB" hi_test_getpid
expect_rc 6
expect_err "pid $TPID \(inj_wait\) is stopped .*kill -CONT $TPID"
sleep 0.2
assert_not_traced "$TPID"
assert_not_loaded "$TPID" "$LIB"
[ "$(awk '/^State:/{print $2}' /proc/$TPID/status)" = T ] || fail "target no longer stopped"
kill -CONT "$TPID"
wait_exit "$TPID" 15
[ "$WRC" = 0 ] || fail "stopped target exited with $WRC"
grep -Eq '^slept [0-9.]+ rc=0 errno=0$' "$TMP/inj_wait.out" || fail "nanosleep disturbed: $(cat "$TMP/inj_wait.out")"
ok "stopped process: refused, stays stopped, nothing loaded"
