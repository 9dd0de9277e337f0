#!/usr/bin/env bash
# inject into a thread blocked in read() on a pipe (ptrace and gdb): data
# written before, during and after the injection all arrives, in order,
# nothing lost, and no EINTR reaches the program.
source "$(dirname "$0")/inject_common.bash"
build_testlib

for via in ptrace gdb; do
    rm -f "$TMP/fifo" "$TMP/got" "$TMP/sent"
    mkfifo "$TMP/fifo"
    exec 3<>"$TMP/fifo"            # a writer that stays open: no EOF
    start_target_stdin "$TMP/fifo" inj_wait pipe "$TMP/got"
    printf 'line one before the injection\n' | tee -a "$TMP/sent" >&3
    sleep 0.3                      # the target is back in read()
    inject -p "$TPID" --via "$via" "$LIB" hi_test_count
    expect_rc 0
    expect_out '^called hi_test_count\(NULL\) = 1$'
    assert_loaded "$TPID" "$LIB"
    assert_fine "$TPID"
    for i in $(seq 1 200); do echo "line $i after the injection $RANDOM$RANDOM"; done >>"$TMP/sent.tail"
    cat "$TMP/sent.tail" | tee -a "$TMP/sent" >&3
    echo END | tee -a "$TMP/sent" >&3
    rm -f "$TMP/sent.tail"
    wait_exit "$TPID" 15
    exec 3>&-
    [ "$WRC" = 0 ] || fail "target exited with $WRC"
    cat "$TMP/inj_wait.out"
    cmp "$TMP/sent" "$TMP/got" || fail "data lost or changed across the injection ($via)"
    grep -q 'eintr=0 usr1=0$' "$TMP/inj_wait.out" || fail "read() saw EINTR ($via)"
    ok "pipe via $via: $(wc -c <"$TMP/got") bytes intact"
done
