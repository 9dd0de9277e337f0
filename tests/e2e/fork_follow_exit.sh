#!/usr/bin/env bash
# fork_follow_exit: nothing lost when a process attached with `heapinject
# attach` ends (issue 28, item 5). A followed worker that calls exit(7)
# leaves its last snapshot: its socket is gone, and `snapshot -p WORKER`
# after its parent reaped it reports the snapshot of its last moment (its
# last allocation, in exit's way, included) marked "exited at TIME (exit
# code 7)", exits 3 and removes the file: a second `snapshot` finds
# nothing. One killed by SIGSEGV the same, "killed by signal 11" (the
# fatal handler's way). The same for the server itself, attached without following,
# when it exits. A worker that execs leaves, and the socket it could not
# remove goes at the next command that finds it (no profiler mapped); a
# worker killed with SIGKILL leaves a socket its parent's profiler removes
# (within its 2 s sweep). Was: the worker's socket stayed, its data was lost
# ("no such process").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stress/rel_lib.bash"
. "$(dirname "$0")/fork_lib.bash"

# last_report PID HOW FUNCTION...: `snapshot -p PID` of the process gone
# must exit 3 with the note ("exit code 7", "killed by signal 11") and the
# counts; prints stacks_of's lines.
last_report() {
    local pid=$1 how=$2 rc; shift 2
    "$HEAPINJECT" snapshot -p "$pid" --format json -o "$TMP/$pid.json" 2>"$TMP/$pid.err"
    rc=$?
    [ "$rc" = 3 ] || fail "snapshot of the exited $pid exited $rc, want 3: $(cat "$TMP/$pid.err")"
    grep -Eq "^heapinject: pid $pid exited at [0-9-]+ [0-9:]+ .*\($how[,)]" "$TMP/$pid.err" ||
        fail "no exit line for $pid: $(cat "$TMP/$pid.err")"
    python3 - "$TMP/$pid.json" "$how" <<'PY' || fail "the report of $pid is not marked as its last"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
assert "(%s" % sys.argv[2] in d.get("note", ""), d.get("note")
PY
    [ ! -e "$SOCKDIR/$pid.last" ] || fail "$SOCKDIR/$pid.last is left after it was read"
    "$HEAPINJECT" snapshot -p "$pid" >/dev/null 2>"$TMP/again.err"
    rc=$?
    [ "$rc" = 3 ] && grep -q "no such process" "$TMP/again.err" || fail "a second snapshot of $pid: rc $rc, $(cat "$TMP/again.err")"
    stacks_of "$TMP/$pid.json" "$@"
}

rel_start fork_server "$SOCKDIR"
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 --follow-forks 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
rel_cmd prefork '^done prefork' >/dev/null
fork_worker
W=$CHILD
[ -S "$SOCKDIR/$W.sock" ] || fail "no socket of worker $W"
kill -USR1 "$W"
wait_for_line "$TOUT" "^worker $W exiting ok" 30 || fail "worker $W did not exit: $(tail -3 "$TOUT")"
line=$(rel_cmd "reap $W" "^reaped $W ")
[ "$line" = "reaped $W code=7" ] || fail "worker $W ended otherwise: $line"
[ ! -e "$SOCKDIR/$W.sock" ] || fail "the socket of the exited worker $W is left: $(ls -la "$SOCKDIR")"
[ -f "$SOCKDIR/$W.last" ] || fail "worker $W left no last snapshot: $(ls -la "$SOCKDIR")"
perm=$(stat -c %a "$SOCKDIR/$W.last")
[ "$perm" = 600 ] || fail "$SOCKDIR/$W.last has mode $perm"
out=$(last_report "$W" "exit code 7" worker_last_alloc worker_first_alloc worker_alloc parent_before_fork)
echo "worker $W: $out" | tr '\n' ';'; echo
expect_count "$out" worker_last_alloc 1 1
expect_count "$out" worker_first_alloc 1 1
expect_count "$out" worker_alloc 20 20
expect_count "$out" parent_before_fork 0 0

# A worker that dies of SIGSEGV: the fatal handler's way.
ulimit -c 0
fork_worker
S=$CHILD
kill -SEGV "$S"
line=$(rel_cmd "reap $S" "^reaped $S ")
[ "$line" = "reaped $S sig=11" ] || fail "worker $S ended otherwise: $line"
[ ! -e "$SOCKDIR/$S.sock" ] || fail "the socket of the crashed worker $S is left"
out=$(last_report "$S" "killed by signal 11" worker_first_alloc worker_alloc)
echo "crashed worker $S: $out" | tr '\n' ';'; echo
expect_count "$out" worker_first_alloc 1 1
expect_count "$out" worker_alloc 20 20

# A worker that execs leaves: nothing of ours survives exec; the socket it
# left is removed by the first command that finds it refusing.
fork_worker
X=$CHILD
[ -S "$SOCKDIR/$X.sock" ] || fail "no socket of worker $X"
kill -USR2 "$X"
for ((i = 0; i < 600; i++)); do [ "$(cat /proc/"$X"/comm 2>/dev/null)" = sleep ] && break; sleep 0.05; done
[ "$(cat /proc/"$X"/comm)" = sleep ] || fail "worker $X did not exec"
"$HEAPINJECT" snapshot -p "$X" >/dev/null 2>"$TMP/x.err"
rc=$?
[ "$rc" = 7 ] || fail "snapshot of the exec'd worker $X exited $rc, want 7: $(cat "$TMP/x.err")"
grep -q "pid $X has run exec since its profiler started" "$TMP/x.err" || fail "no word of the exec: $(cat "$TMP/x.err")"
[ ! -e "$SOCKDIR/$X.sock" ] || fail "the socket of the exec'd worker $X is left"
kill "$X"
rel_cmd "reap $X" "^reaped $X " >/dev/null

# A worker killed (no exit handler runs): its parent's profiler removes
# the socket once the pid is gone.
fork_worker
K=$CHILD
kill -9 "$K"
line=$(rel_cmd "reap $K" "^reaped $K ")
[ "$line" = "reaped $K sig=9" ] || fail "worker $K ended otherwise: $line"
for ((i = 0; i < 400; i++)); do [ -e "$SOCKDIR/$K.sock" ] || break; sleep 0.05; done
[ ! -e "$SOCKDIR/$K.sock" ] || fail "the socket of the killed worker $K is left after 20 s"
[ ! -e "$SOCKDIR/$K.last" ] || fail "a killed worker left a last snapshot"

# The server, attached alone, exits 0 ("quit").
rel_cmd check '^check errors=0' >/dev/null
"$HEAPINJECT" detach -q -p "$TPID" 2>"$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
# Left by processes gone: a last snapshot unread for two days, a fresh
# one, half of one. The next attach's sweep removes the old and the half.
dead=(); for k in 1 2 3; do true & dead+=("$!"); wait "$!"; done
mkdir -p -m 700 "$SOCKDIR"
printf x >"$SOCKDIR/${dead[0]}.last"; touch -d '2 days ago' "$SOCKDIR/${dead[0]}.last"
printf x >"$SOCKDIR/${dead[1]}.last"; printf x >"$SOCKDIR/${dead[2]}.last.tmp"
chmod 600 "$SOCKDIR"/*.last*
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 2>"$TMP/attach2.err" || fail "attach: $(cat "$TMP/attach2.err")"
[ ! -e "$SOCKDIR/${dead[0]}.last" ] || fail "a last snapshot 2 days old of a process gone was kept"
[ ! -e "$SOCKDIR/${dead[2]}.last.tmp" ] || fail "half a last snapshot of a process gone was kept"
[ -e "$SOCKDIR/${dead[1]}.last" ] || fail "a fresh last snapshot was removed"
rm -f "$SOCKDIR/${dead[1]}.last"
rel_cmd prefork '^done prefork' >/dev/null
P=$TPID
rel_cmd quit '^bye' >/dev/null
for ((i = 0; i < 600; i++)); do alive "$P" || break; sleep 0.05; done
wait "$P"; rc=$?
[ "$rc" = 0 ] || fail "the server exited $rc"
[ ! -e "$SOCKDIR/$P.sock" ] || fail "the socket of the exited server is left"
out=$(last_report "$P" "exit code 0" parent_before_fork)
echo "server $P: $out" | tr '\n' ';'; echo
expect_count "$out" parent_before_fork 8 8
ok "an exited worker's and server's last snapshots are reported once, marked with their exit; an exec'd worker's socket removed; no socket left"
