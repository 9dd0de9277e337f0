#!/bin/bash
# census_kill.sh - a census whose cli is killed (SIGKILL) at each stage:
# while attaching, while it holds the program's threads for their
# registers (made long with strace delaying the cli's ptrace calls), while
# the copy is walked, while the records are sent.
# Each time the agent finishes or stops the census, reaps the copy and,
# as the session's owner is gone, detaches: no child or zombie of the
# target, no tracer, no GOT slot left hooked, and the target's own data
# checks pass. A census after all that still works.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

start_target census_truth
# The copy is a child of the target's parent (CLONE_PARENT: no wait() of
# the target can reap it), here this shell.
TPARENT=$(ps -o ppid= -p "$TPID" | tr -d ' ')
copy_walking() { ps -o comm= --ppid "$TPARENT" | grep -q heapinject-cen; }
during_walk=0
# recovered_after_kill WHAT: the census' leftovers are gone within 10 s
# (the agent may still be walking, or waiting for its time-to-live).
recovered_after_kill() {
    gone=0
    for i in $(seq 100); do
        kids=$(ps -o pid=,stat= --ppid "$TPID"; ps -o pid=,stat=,comm= --ppid "$TPARENT" | grep heapinject-cen)
        traced=$(awk '/^TracerPid:/{print $2}' "/proc/$TPID/status")
        # In a subshell: rel_hooks_gone fails the test (exit) when a slot is
        # still hooked, and here that is only "not yet".
        if [ -z "$kids" ] && [ "$traced" = 0 ] && (rel_hooks_gone "$TPID") >/dev/null 2>&1; then
            gone=1; break
        fi
        sleep 0.1
    done
    [ "$gone" = 1 ] || fail "cli killed $1: left behind: children '$kids', tracer $traced, or hooks"
    assert_alive "$TPID"
    echo "killed $1: nothing left after $((i / 10)).$((i % 10)) s"
}

during_walk=0
for delay in 0.005 0.02 0.05 0.2 0.3 0.4 0.5 0.7 0.9 1.4; do
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/k.json" 2>"$TMP/k.err" &
    CLI=$!
    sleep "$delay"
    stage="before or after the walk"
    copy_walking && { stage="during the walk"; during_walk=$((during_walk + 1)); }
    kill -9 "$CLI" 2>/dev/null
    wait "$CLI" 2>/dev/null
    recovered_after_kill "after ${delay}s ($stage)"
done
# The fixed delays above land in the walk only as the machine's speed
# allows (a faster attach moved the walk between two of them): one kill
# more, sent as soon as the copy is seen walking.
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/k.json" 2>"$TMP/k.err" &
CLI=$!
seen=0
for i in $(seq 2500); do
    copy_walking && { seen=1; break; }
    kill -0 "$CLI" 2>/dev/null || break
done
kill -9 "$CLI" 2>/dev/null
wait "$CLI" 2>/dev/null
[ "$seen" = 1 ] && during_walk=$((during_walk + 1))
recovered_after_kill "as soon as the copy was walking (seen: $seen)"
[ "$during_walk" -gt 0 ] || fail "no kill landed while the copy was being walked"

# Killed while holding the threads: each ptrace call of the cli's delayed
# 100 ms, the kill lands in the middle of the hold. The kernel lets a dead
# tracer's tracees go: none stays stopped or traced.
"$HEAPINJECT" attach -p "$TPID" --ttl 0 -q || fail "attach for the hold stage failed"
strace -f -o /dev/null -e trace=ptrace -e inject=ptrace:delay_enter=100000 \
    "$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/h.json" 2>"$TMP/h.err" &
CLI=$!
held=0
for i in $(seq 100); do
    threads_untraced "$TPID" || { held=1; break; }
    sleep 0.05
done
[ "$held" = 1 ] || fail "the census never held a thread (strace: $(cat "$TMP/h.err"))"
kill -9 "$CLI"; wait "$CLI" 2>/dev/null
sleep 0.3
assert_threads_untraced "$TPID" # cli killed while holding them
"$HEAPINJECT" detach -p "$TPID" -q 2>/dev/null
assert_alive "$TPID"
echo "killed while holding the threads: every thread runs on, untraced"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_truth.out" "verify" 10 || fail "target did not verify"
grep -q "verify ok" "$TMP/census_truth.out" || fail "target data damaged"
! grep -q "verify BAD" "$TMP/census_truth.out" || fail "a thread's data damaged"
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/after.json" || fail "census after the kills failed"
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; assert d['unreachable']['blocks'] >= 40000, d['unreachable']" "$TMP/after.json" ||
    fail "census after the kills is wrong"
ok "cli killed at 11 moments of a census (one holding the threads, $during_walk during the walk): no child, zombie, tracer or hook left; data intact; next census right"
