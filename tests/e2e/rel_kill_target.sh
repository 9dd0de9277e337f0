#!/usr/bin/env bash
# rel_kill_target: the target dies (SIGKILL) under heapinject's hands. While
# a session is attached, at each stage of the injection (thread seized,
# rescue frame set up, inside dlopen, inside heapinject_start), and in the
# middle of a snapshot on the wire (`heapinject snapshot` and a one-shot
# session's periodic snapshot). Each time the cli says that the process
# exited and exits with status 3 (no such process / it exited), promptly,
# without a crash (a sanitizer-free build: any signal death is a failure).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
KILLER="python3 $ROOT/tests/stress/rel_killer.py"
faults=0

# expect_exit3 WHAT RC ERRFILE: exit status 3 and a message that says so.
expect_exit3() {
    echo "$1: exit $2; $(grep -v '^inject: \[' "$3" | tail -2 | tr '\n' ' ')"
    [ "$2" = 3 ] || fail "$1: exit status $2, want 3: $(cat "$3")"
    grep -Eq "exited|was killed by signal 9|no such process" "$3" ||
        fail "$1: no message about the exit: $(cat "$3")"
    faults=$((faults + 1))
}

# --- killed while a session is attached ------------------------------------
rel_start rel_churn 4
"$HEAPINJECT" -p "$TPID" --duration 60 -o "$TMP/attached.txt" >/dev/null 2>"$TMP/attached.err" &
CLI=$!
wait_for_line "$TMP/attached.err" "attached to pid $TPID" 30 || fail "no 'attached': $(cat "$TMP/attached.err")"
sleep 2.5 # after the first periodic snapshot
kill -KILL "$TPID"
t0=$(date +%s)
wait "$CLI"; rc=$?
expect_exit3 "killed while attached" "$rc" "$TMP/attached.err"
(($(date +%s) - t0 < 10)) || fail "the cli took $(($(date +%s) - t0)) s to notice"
grep -q "pid $TPID exited during the session" "$TMP/attached.err" || fail "message: $(cat "$TMP/attached.err")"
grep -q "worker" "$TMP/attached.txt" || fail "no report from the last snapshot: $(head "$TMP/attached.txt")"
grep -q "before the process exited" "$TMP/attached.txt" || fail "the report does not say the process exited"

# --- killed during the injection -------------------------------------------
for stage in "seized thread" "rescue frame at" 'calling dlopen\(' "calling heapinject_start" "registers restored"; do
    rel_start rel_churn 4
    $KILLER --victim "$TPID" --timeout 60 "$stage" -- \
        "$HEAPINJECT" -p "$TPID" -v --duration 5 -o "$TMP/inj.txt" >/dev/null 2>"$TMP/inj.err"
    rc=$(sed -n 's/^killer: exit //p' "$TMP/inj.err")
    grep -q '^killer: hit' "$TMP/inj.err" || fail "stage '$stage' never came: $(tail -5 "$TMP/inj.err")"
    expect_exit3 "killed at '$stage'" "$rc" "$TMP/inj.err"
    wait "$TPID" 2>/dev/null
done

# A kill a few ms after the seize lands while the held thread is checked
# (safe point, the libc still where it was): the dying process's maps are
# empty there, which once read as "exec'd a new program" (exit 6). At 2-4
# ms one kill in about seven hit that window on this machine.
for delay in 1 2 2 3 3 3 4 4 5 6; do
    rel_start rel_churn 4
    $KILLER --victim "$TPID" --timeout 60 --delay-ms "$delay" "seized thread" -- \
        "$HEAPINJECT" -p "$TPID" -v --duration 5 -o "$TMP/inj.txt" >/dev/null 2>"$TMP/inj.err"
    rc=$(sed -n 's/^killer: exit //p' "$TMP/inj.err")
    expect_exit3 "killed ${delay} ms after 'seized thread'" "$rc" "$TMP/inj.err"
    wait "$TPID" 2>/dev/null
done

# --- killed in the middle of a snapshot ------------------------------------
# 8192 stacks of ~50 frames, all with live samples: a 7 MB snapshot. The
# cli reads about 1 MB of the target's /proc files before it; at 2.5 MB read
# it is well inside the stream.
rel_start rel_bigsnap 13
"$HEAPINJECT" attach -p "$TPID" --rate 1 >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
sleep 2
rel_kill_midstream "$TPID" 2500000 "$HEAPINJECT" snapshot -p "$TPID" -o "$TMP/snap.txt"
[ "$MID_AT" != never ] || fail "the snapshot ended before 2.5 MB were read: $(cat "$TMP/mid.err")"
echo "killed after the cli read $MID_AT bytes"
expect_exit3 "killed during 'heapinject snapshot'" "$MID_RC" "$TMP/mid.err"

rel_start rel_bigsnap 13
MID_AFTER="attached to pid" rel_kill_midstream "$TPID" 1500000 \
    "$HEAPINJECT" -p "$TPID" --rate 1 --duration 60 -o "$TMP/os.txt"
[ "$MID_AT" != never ] || fail "no snapshot on the wire: $(cat "$TMP/mid.err")"
echo "killed after the cli read $MID_AT bytes"
expect_exit3 "killed during a session's snapshot" "$MID_RC" "$TMP/mid.err"
grep -q "exited" "$TMP/os.txt" || fail "no report saying the process exited: $(head -5 "$TMP/os.txt")"

echo "RESULT rel_kill_target faults=$faults failures=0"
ok "$faults target deaths reported with exit status 3"
