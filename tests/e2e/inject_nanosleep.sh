#!/usr/bin/env bash
# inject into a thread blocked in nanosleep (ptrace and gdb): the library is
# loaded, the call runs inside the target, and the sleep still lasts its full
# time with no EINTR reaching the program (the kernel restarts the syscall).
source "$(dirname "$0")/inject_common.bash"
build_testlib

for via in ptrace gdb; do
    start_target inj_wait nanosleep 5
    out="$TMP/inj_wait.out"
    sleep 0.3
    inject -p "$TPID" --via "$via" "$LIB" hi_test_getpid
    expect_rc 0
    expect_out "^loaded $LIB at 0x[0-9a-f]+ in pid $TPID\$"
    expect_out "^called hi_test_getpid\(NULL\) = $TPID\$"
    assert_loaded "$TPID" "$LIB"
    assert_fine "$TPID"
    # A second call through the same thread state, with a string.
    inject -p "$TPID" --via "$via" "$LIB" hi_test_strlen "twelve chars"
    expect_rc 0
    expect_out '^called hi_test_strlen\("twelve chars"\) = 12$'
    assert_fine "$TPID"
    wait_exit "$TPID" 15
    [ "$WRC" = 0 ] || fail "target exited with $WRC"
    line=$(grep '^slept' "$out") || fail "no report from target: $(cat "$out")"
    echo "target ($via): $line"
    echo "$line" | grep -q 'rc=0 errno=0$' || fail "nanosleep was disturbed: $line"
    awk -v s="$(echo "$line" | awk '{print $2}')" 'BEGIN{exit !(s >= 5.0)}' \
        || fail "nanosleep returned early: $line"
    ok "nanosleep via $via"
    rm -f "$out"
done
