#!/usr/bin/env bash
# rel_kill_anywhere: SIGKILL lands at random moments of an attach, not only
# at the log lines rel_kill_cli and rel_kill_target stop at. Each round picks
# a victim (heapinject itself or the target), a stage of `heapinject -p -v`
# and a delay of 0-10 ms after that stage's line. rel_kill_target found
# this way that a target killed 2-4 ms after the seize was reported as
# having exec'd a new program (exit 6): its dying memory left empty maps.
#   victim cli:    the target recovers by itself (rel_recovered: profiler
#                  gone within 2 s, untraced, slots back, its data intact,
#                  no rescue page left);
#   victim target: the cli exits 3 and says the process exited.
# REL_KILL_ROUNDS rounds (16; `make stress` runs 300); REL_SEED makes a run
# repeatable (the seed is printed).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
KILLER="python3 $ROOT/tests/stress/rel_killer.py"
ROUNDS=${REL_KILL_ROUNDS:-16}
SEED=${REL_SEED:-$(( $(date +%s) % 100000 ))}
RANDOM=$SEED
echo "seed $SEED, $ROUNDS rounds (REL_SEED=$SEED repeats this run)"
faults=0 slowest=0 window=0 target_kills=0 cli_kills=0

stages=("seized thread" "is at a safe point" "mapping a rescue page" "rescue frame at"
        'calling dlopen\(' "loaded: handle" "calling heapinject_start" "rescue page unmapped"
        "parking thread" "registers restored" "attached to pid" "background snapshot")

start_target() {
    rel_start rel_churn 4
    base_pages=$(rescue_pages)
}

start_target
for ((round = 1; round <= ROUNDS; round++)); do
    stage=${stages[RANDOM % ${#stages[@]}]}
    delay=$((RANDOM % 11))
    if ((RANDOM % 2)); then
        what="round $round: target killed $delay ms after '$stage'"
        $KILLER --victim "$TPID" --timeout 60 --delay-ms "$delay" "$stage" -- \
            "$HEAPINJECT" -p "$TPID" -v --duration 5 -o "$TMP/inj.txt" >/dev/null 2>"$TMP/kill.err"
        grep -q '^killer: hit' "$TMP/kill.err" || fail "$what: the stage never came: $(tail -5 "$TMP/kill.err")"
        rc=$(sed -n 's/^killer: exit //p' "$TMP/kill.err")
        msg=$(grep -v '^inject: \[\|^killer:' "$TMP/kill.err" | tail -2 | tr '\n' ' ')
        [ "$rc" = 3 ] || fail "$what: exit status $rc, want 3: $(cat "$TMP/kill.err")"
        grep -Eq "exited|was killed by signal 9|no such process" <<<"$msg" ||
            fail "$what: no message about the exit: $msg"
        echo "$what: exit 3; $msg"
        wait "$TPID" 2>/dev/null
        target_kills=$((target_kills + 1))
        faults=$((faults + 1))
        start_target
    else
        what="round $round: cli killed $delay ms after '$stage'"
        $KILLER --timeout 60 --delay-ms "$delay" "$stage" -- \
            "$HEAPINJECT" -p "$TPID" -v --duration 30 -o "$TMP/never.txt" >/dev/null 2>"$TMP/kill.err"
        grep -q '^killer: hit' "$TMP/kill.err" || fail "$what: the stage never came: $(tail -5 "$TMP/kill.err")"
        grep -q '^killer: exit -9' "$TMP/kill.err" || fail "$what: the cli ended before the kill: $(tail -5 "$TMP/kill.err")"
        rel_recovered "$what"
        cli_kills=$((cli_kills + 1))
    fi
done
rel_quit

echo "RESULT rel_kill_anywhere seed=$SEED rounds=$ROUNDS cli_kills=$cli_kills target_kills=$target_kills slowest_detach_ms=$slowest page_mmap_window=$window failures=0"
ok "$faults random kills (seed $SEED): the target recovered from each of the cli's, the cli said exit 3 for each of the target's"
