#!/usr/bin/env bash
# rel_states: -p given a process in a state nobody attaches to on purpose.
# Each gets a clear refusal (or a clear account) within 2 s and is left as
# it was: a vfork child (its parent must hold no hooked slot afterwards,
# checked through /proc/PID/mem), the parent waiting in vfork, a thread id,
# a SIGSTOPped process (left stopped), a process that execs every 200 ms.
# The targets check their own data (rel_states.c) before they exit.
# Schedule: alone (each state answered within the 2 s promise)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

# run_timed NAME CMD...: runs CMD with stderr in $TMP/NAME.err; sets RC and MS.
run_timed() {
    local name=$1 t0; shift
    t0=$(date +%s%N)
    "$@" >/dev/null 2>"$TMP/$name.err"; RC=$?
    MS=$((($(date +%s%N) - t0) / 1000000))
    echo "$name: exit $RC in $MS ms: $(head -c 300 "$TMP/$name.err")"
}
within_2s() { [ "$MS" -lt 2000 ] || fail "$1 took $MS ms (promise: 2 s)"; }
not_loaded() { ! grep -q libheapinject "/proc/$1/maps" || fail "$2: the profiler got loaded into pid $1"; }

# --- a vfork child, and its parent waiting in vfork ------------------------
rel_start rel_states vfork "$TMP/flag"
P=$TPID
wait_for_line "$TOUT" '^child' 10 || fail "no vfork child: $(cat "$TERR")"
C=$(awk '/^child/{print $2}' "$TOUT")
run_timed vfork_child "$HEAPINJECT" -p "$C" --duration 3 -o "$TMP/c.txt"
[ "$RC" = 6 ] || fail "vfork child: exit $RC, want 6"
grep -q "pid $C (rel_states) is a vfork child of pid $P" "$TMP/vfork_child.err" || fail "vfork child: message"
within_2s "the vfork child's refusal"
run_timed vfork_parent "$HEAPINJECT" -p "$P" --duration 3 -o "$TMP/p.txt"
[ "$RC" = 6 ] || fail "vfork parent: exit $RC, want 6"
grep -q "pid $P (rel_states) waits in vfork() for its child pid $C" "$TMP/vfork_parent.err" ||
    fail "vfork parent: message"
grep -q "already traced" "$TMP/vfork_parent.err" && fail "vfork parent: 'already traced'"
within_2s "the vfork parent's refusal"
not_loaded "$P" "vfork"
assert_not_traced "$P"; assert_not_traced "$C"
n=$(rel_hooks_gone "$P") || exit 1
echo "parent: $n malloc-family slots read through /proc/$P/mem, none hooked"
touch "$TMP/flag"
rel_cmd "" '^parent back' 120 | grep -q 'errors=0' || fail "the parent found its data damaged"
rel_hooks_gone "$P" >/dev/null || exit 1
# Once the child is gone, the parent is an ordinary process.
"$HEAPINJECT" -p "$P" --duration 1 -o "$TMP/p2.txt" 2>"$TMP/p2.err" || fail "parent after vfork: $(cat "$TMP/p2.err")"
grep -q "runs on without hooks (all [0-9]* allocator slots" "$TMP/p2.err" || fail "no verified detach: $(cat "$TMP/p2.err")"
rel_quit

# --- a thread id ------------------------------------------------------------
rel_start rel_states threads
TID=$(ls "/proc/$TPID/task" | grep -vx "$TPID" | head -1)
run_timed thread "$HEAPINJECT" -p "$TID" --duration 3 -o "$TMP/t.txt"
[ "$RC" = 2 ] || fail "thread id: exit $RC, want 2"
grep -q "$TID is a thread (rel_states) of process $TPID (rel_states), not a process.*use -p $TPID" \
    "$TMP/thread.err" || fail "thread id: message"
within_2s "the thread id's refusal"
not_loaded "$TPID" "thread id"
rel_untraced "$TPID"

# --- a stopped process -------------------------------------------------------
kill -STOP "$TPID"
for ((i = 0; i < 100; i++)); do grep -q '^State:.*T' "/proc/$TPID/status" && break; sleep 0.02; done
for cmd in "-p $TPID --duration 3 -o $TMP/s.txt" "attach -p $TPID"; do
    run_timed stopped "$HEAPINJECT" $cmd
    [ "$RC" = 6 ] || fail "stopped ($cmd): exit $RC, want 6"
    grep -q "pid $TPID (rel_states) is stopped (state T.*It was left stopped.*kill -CONT $TPID" "$TMP/stopped.err" ||
        fail "stopped: message"
    within_2s "the stopped process's refusal"
    grep -q '^State:.*T (stopped)' "/proc/$TPID/status" || fail "the process was not left stopped"
    assert_not_traced "$TPID"
    not_loaded "$TPID" "stopped"
done
kill -CONT "$TPID"
rel_cmd check '^check ok' 120 | grep -q 'errors=0' || fail "data damaged after the stop"
rel_quit

# --- a process that execs every 200 ms --------------------------------------
start_target rel_states exec 0
execs=0
for i in 1 2 3 4 5; do
    run_timed exec "$HEAPINJECT" -p "$TPID" --duration 5 -o "$TMP/e.txt"
    grep -q "pid $TPID exec'd a new program" "$TMP/exec.err" || fail "exec: no word of the exec"
    grep -q "lost the profiler" "$TMP/exec.err" && fail "exec: 'lost the profiler'"
    # 3 whether the exec came during the session or while heapinject was
    # getting ready ("its libc moved": CI once saw 6 there, which
    # cli_target_messages refused)
    [ "$RC" = 3 ] || fail "exec: exit $RC, want 3"
    within_2s "the exec's account"
    assert_alive "$TPID"
    execs=$((execs + 1))
done
# An exec between reading the target's libc and holding a thread: strace
# holds the cli's first ptrace call (the seize) for 300 ms, longer than the
# 200 ms between execs, so the held thread runs a new image whose libc is
# elsewhere. Said as an exec, exit 3, nothing done.
run_timed exec_ready strace -f -o /dev/null -e trace=ptrace -e inject=ptrace:delay_enter=300000:when=1 \
    "$HEAPINJECT" -p "$TPID" --duration 5 -o "$TMP/e.txt"
grep -q "pid $TPID exec'd a new program while heapinject was getting ready" "$TMP/exec_ready.err" ||
    fail "an exec before the thread was held: $(cat "$TMP/exec_ready.err")"
[ "$RC" = 3 ] || fail "an exec before the thread was held: exit $RC, want 3"
not_loaded "$TPID" "an exec before the thread was held"
assert_alive "$TPID"
rel_untraced "$TPID"
grep -q "rel_states:" "$TMP/rel_states.err" && fail "the exec'ing target found errors: $(cat "$TMP/rel_states.err")"

echo "RESULT rel_states refusals=6 execs=$execs failures=0"
ok "vfork child and parent, thread id, stopped process, exec loop: clear messages within 2 s, targets intact"
