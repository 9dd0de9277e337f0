#!/bin/bash
# census_eintr.sh - a census's freeze (the program's threads held with
# ptrace for their registers) must not make a blocking call fail with an
# EINTR the program would not have seen without us. Issue 25 saw one per
# census in io_uring_enter, recv with SO_RCVTIMEO, epoll_wait and
# sigtimedwait: the kernel ends those with a bare EINTR on any stop. The
# target (tests/targets/census_eintr.c) waits in each in its own thread
# and counts EINTR; after 5 censuses every count must be 0, every census
# must have held those threads, and the target's list must check.
. "$(dirname "$0")/lib.sh"
N=${CENSUS_EINTR_ROUNDS:-5}

mkfifo "$TMP/in.fifo"
"$TARGETS/census_eintr" <"$TMP/in.fifo" >"$TMP/census_eintr.out" 2>"$TMP/census_eintr.err" &
TPID=$!
PIDS+=("$TPID")
exec 7>"$TMP/in.fifo"
wait_for_line "$TMP/census_eintr.out" ready 10 || fail "target not ready: $(cat "$TMP/census_eintr.err")"
grep 'skipped' "$TMP/census_eintr.out" | sed 's/^/note: /'

status() {
    local before; before=$(grep -c '^status' "$TMP/census_eintr.out")
    echo status >&7
    for _ in $(seq 200); do
        [ "$(grep -c '^status' "$TMP/census_eintr.out")" -gt "$before" ] && break
        sleep 0.05
    done
    grep '^status' "$TMP/census_eintr.out" | tail -1
}

for ((i = 1; i <= N; i++)); do
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/c$i.json" 2>"$TMP/err" ||
        fail "census $i: $(cat "$TMP/err")"
    python3 - "$TMP/c$i.json" <<'PY' || fail "census $i did not hold the waiting threads"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
held = c["threads_held_ms"]
assert held > 0, f"threads_held_ms {held}: the freeze did not stop the threads"
PY
done
line=$(status)
echo "after $N censuses the target says: $line"
case "$line" in
*"recv=0 epoll=0 sigtimedwait=0 "*) ;;
*) fail "the program saw EINTR from the census's freeze: $line" ;;
esac
case "$line" in *"io_uring=0 "* | *"io_uring=skip "*) ;; *) fail "io_uring_enter saw EINTR: $line" ;; esac
case "$line" in *"data=ok"*) ;; *) fail "the target's data changed: $line" ;; esac
assert_alive "$TPID"
assert_threads_untraced "$TPID"
ok "$N censuses: no EINTR in recv (SO_RCVTIMEO), epoll_wait, sigtimedwait, io_uring_enter; data intact"
exec 7>&-
