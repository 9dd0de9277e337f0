#!/bin/bash
# cli_detach_cycles.sh - `heapinject detach` returns once the profiler is
# gone: 50 attach/detach cycles back to back, on an idle target (it naps in
# nanosleep) with a busy loop on a core beside it, never hear "already
# attached" from the attach right after a detach. The target's naps are
# never cut short, and it ends untraced and unhooked.
. "$(dirname "$0")/lib.sh"

N=${DETACH_CYCLES:-50}
start_target inj_wait naps 600
# Busy loops on both cores beside the cycles (the load under which make
# check's inject_pause_wakeup once heard "already attached"), and the
# profiler's thread at SCHED_IDLE: it runs only when the busy loops leave
# it a slice, as a thread of a loaded machine that the scheduler passes
# over, so that what it does after closing its socket takes long.
BUSY=()
for c in 1 2; do
    ( while :; do :; done ) &
    BUSY+=($!); PIDS+=($!)
done
# idle_agent: every profiler thread of the target to SCHED_IDLE (the last
# session's may still be on its way out: it may vanish meanwhile); status 1
# when none was set.
idle_agent() {
    local f tid n=0
    for f in $(grep -l '^heapinject$' /proc/"$TPID"/task/*/comm 2>/dev/null); do
        tid=$(echo "$f" | cut -d/ -f5)
        chrt --idle -p 0 "$tid" 2>/dev/null && n=$((n + 1))
    done
    [ "$n" -gt 0 ]
}
for ((i = 1; i <= N; i++)); do
    "$HEAPINJECT" attach -p "$TPID" -q --rate 64K 2>"$TMP/attach.err" ||
        fail "cycle $i: attach after a detach that returned failed: $(cat "$TMP/attach.err")"
    idle_agent || fail "cycle $i: no profiler thread of $TPID set to SCHED_IDLE"
    "$HEAPINJECT" detach -p "$TPID" -q 2>"$TMP/detach.err" || fail "cycle $i: detach failed: $(cat "$TMP/detach.err")"
    assert_alive "$TPID"
done
kill "${BUSY[@]}"
grep -q "bad nap" "$TMP/inj_wait.out" && fail "a nap of the target was cut short: $(grep -m3 'bad nap' "$TMP/inj_wait.out")"
assert_threads_untraced "$TPID"
ls /tmp/heapinject-"$(id -u)"/ 2>/dev/null | grep -q "^$TPID" && fail "a socket of $TPID is left"
ok "$N attach/detach cycles back to back with a busy core beside: never 'already attached'"
