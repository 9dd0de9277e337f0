#!/usr/bin/env bash
# rel_eintr: an injection must not make a blocking system call fail with an
# EINTR the program would not have seen without us. The main thread of each
# target waits in one call over and over (tests/targets/inj_eintr.c): waits
# the kernel restarts by itself after a stop (pipe read, nanosleep, futex,
# poll, select) and those it ends with a bare EINTR on any stop, even a
# ptrace one (epoll_wait, sigtimedwait, io_uring_enter with a timeout, and
# recv/read/recvmsg/accept on a socket with SO_RCVTIMEO: the kernel's
# sock_intr_errno). Each is injected 20 times through ptrace (the injector
# takes the main thread first, so it is the one stopped every time) and a
# few times through gdb; its own count of EINTR must stay 0.
source "$(dirname "$0")/inject_common.bash"
build_testlib
N=${REL_EINTR_ROUNDS:-20}
total=0

# status FIFO: asks the target for its counts; prints the status line.
status() {
    local before; before=$(grep -c '^status' "$TMP/inj_eintr.out")
    echo status >&7
    for _ in $(seq 100); do
        [ "$(grep -c '^status' "$TMP/inj_eintr.out")" -gt "$before" ] && break
        sleep 0.05
    done
    grep '^status' "$TMP/inj_eintr.out" | tail -1
}

run_case() { # CASE VIA COUNT
    local case=$1 via=$2 count=$3 line
    rm -f "$TMP/in.fifo"; mkfifo "$TMP/in.fifo"
    "$TARGETS/inj_eintr" "$case" <"$TMP/in.fifo" >"$TMP/inj_eintr.out" 2>"$TMP/inj_eintr.err" &
    TPID=$!; PIDS+=("$TPID")
    exec 7>"$TMP/in.fifo"
    if ! wait_for_line "$TMP/inj_eintr.out" ready 10; then
        if ! alive "$TPID"; then
            wait "$TPID"; local rc=$?
            [ $rc = 77 ] && { echo "skip case $case: $(cat "$TMP/inj_eintr.out")"; exec 7>&-; return 0; }
        fi
        fail "$case did not get ready: $(cat "$TMP/inj_eintr.out" "$TMP/inj_eintr.err")"
    fi
    sleep 0.2 # into the wait
    for ((i = 1; i <= count; i++)); do
        "$HEAPINJECT" inject -p "$TPID" --via "$via" "$LIB" hi_test_count >"$TMP/inj.out" 2>"$TMP/inj.err" ||
            fail "$case: injection $i via $via failed: $(cat "$TMP/inj.err")"
        total=$((total + 1))
        sleep 0.05
    done
    sleep 0.3 # a restarted wait that failed would be counted by now
    line=$(status)
    echo "$case via $via: $count injections, target says: $line"
    case "$line" in *"eintr=0 "*) ;; *) fail "$case via $via: the program saw EINTR: $line" ;; esac
    assert_fine "$TPID"
    exec 7>&-
    kill -9 "$TPID"; wait "$TPID" 2>/dev/null
}

for c in epoll sigtimedwait io_uring recv_timeo read_timeo recvmsg_timeo accept_timeo pipe nanosleep futex poll select; do
    run_case "$c" ptrace "$N"
done
ok "ptrace: $total injections into 12 kinds of waits, 0 EINTR seen by the targets"
if command -v gdb >/dev/null; then
    for c in epoll recv_timeo io_uring; do
        run_case "$c" gdb 2
    done
    ok "gdb: epoll_wait, recv with SO_RCVTIMEO and io_uring_enter, 0 EINTR"
fi
echo "RESULT rel_eintr injections=$total eintr=0"
