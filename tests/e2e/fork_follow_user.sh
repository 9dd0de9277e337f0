#!/usr/bin/env bash
# fork_follow_user: a followed worker that becomes another user after its
# fork (nginx's, apache's and php-fpm's workers under a root master) still
# leaves its last snapshot (issue 28, item 5).
# Covers: payload/serve/last_keep.c
# Its session starts in the fork, as root, in root's directory (0700): as
# `nobody` it could neither create its PID.last.tmp there at exit nor
# rename it, and its data was lost ("no such process"). Now a root
# session opens the file at its start and keeps it; the worker writes
# through it and, refused the rename, leaves it whole, which the cli
# takes. Checked: `snapshot -p WORKER` after it exit(7)ed and was reaped
# reports its last moment marked "exit code 7", with its own allocations
# (first, 20 kept, last) and none of its parent's; the file is removed
# once read, and none is left in the directory. A worker forked and
# detached without changing user leaves no file open or behind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stress/rel_lib.bash"
. "$(dirname "$0")/fork_lib.bash"

[ "$(id -u)" = 0 ] || skip "needs root (the worker becomes nobody)"
NOBODY=65534

rel_start fork_server "$SOCKDIR"
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 --follow-forks 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
rel_cmd prefork '^done prefork' >/dev/null
W=$(rel_cmd "fork-as $NOBODY" '^forked ' | awk '{print $2}')
PIDS+=("$W")
wait_for_line "$TOUT" "^worker $W ready" 30 || fail "worker $W did not get ready: $(tail -3 "$TOUT") $(tail -3 "$TERR")"
grep -q "^worker $W BAD" "$TOUT" && fail "worker $W: $(grep "^worker $W BAD" "$TOUT")"
uid=$(awk '/^Uid:/ {print $2}' "/proc/$W/status")
[ "$uid" = "$NOBODY" ] || fail "worker $W runs as uid $uid, want $NOBODY"
[ -S "$SOCKDIR/$W.sock" ] || fail "no socket of worker $W: $(ls -la "$SOCKDIR")"
kill -USR1 "$W"
wait_for_line "$TOUT" "^worker $W exiting ok" 30 || fail "worker $W did not exit: $(tail -3 "$TOUT")"
line=$(rel_cmd "reap $W" "^reaped $W ")
[ "$line" = "reaped $W code=7" ] || fail "worker $W ended otherwise: $line"
ls -la "$SOCKDIR" | sed 's/^/    /'

"$HEAPINJECT" snapshot -p "$W" --format json -o "$TMP/w.json" 2>"$TMP/w.err"
rc=$?
[ "$rc" = 3 ] || fail "snapshot of the exited $W exited $rc, want 3: $(cat "$TMP/w.err")"
grep -Eq "^heapinject: pid $W exited at [0-9-]+ [0-9:]+ .*\(exit code 7\)" "$TMP/w.err" ||
    fail "no exit line for $W (its last snapshot lost): $(cat "$TMP/w.err")"
out=$(stacks_of "$TMP/w.json" worker_last_alloc worker_first_alloc worker_alloc parent_before_fork)
echo "worker $W as uid $NOBODY: $out" | tr '\n' ';'; echo
expect_count "$out" worker_last_alloc 1 1
expect_count "$out" worker_first_alloc 1 1
expect_count "$out" worker_alloc 20 20
expect_count "$out" parent_before_fork 0 0
left=$(find "$SOCKDIR" -maxdepth 1 -name "$W.*")
[ -z "$left" ] || fail "files of worker $W left after its snapshot was read: $left"

# A worker that stays root and is detached with its parent: its kept file
# goes with its session.
fork_worker
W2=$CHILD
[ -S "$SOCKDIR/$W2.sock" ] || fail "no socket of worker $W2"
"$HEAPINJECT" detach -q -p "$TPID" --children 2>"$TMP/detach.err" || fail "detach: $(cat "$TMP/detach.err")"
left=$(find "$SOCKDIR" -maxdepth 1 -name "$W2.*" -o -maxdepth 1 -name "$TPID.*")
[ -z "$left" ] || fail "files left after the detach: $left"
for p in "$TPID" "$W2"; do
    n=$(find "/proc/$p/fd" -lname "$SOCKDIR/*" 2>/dev/null | wc -l)
    [ "$n" = 0 ] || fail "pid $p still holds $n files of $SOCKDIR after the detach"
done
kill -HUP "$W2"
wait_for_line "$TOUT" "^worker $W2 check errors=0" 30 || fail "worker $W2's blocks: $(grep "^worker $W2" "$TOUT" | tail -2)"

# The same in a one-shot session of the tree: the worker forked during it
# becomes nobody and exits; the report has its last moment.
"$HEAPINJECT" -p "$TPID" --children --duration 100 --rate 1 --format json -o "$TMP/r.json" 2>"$TMP/r.err" &
H=$!
PIDS+=("$H")
wait_for_line "$TMP/r.err" "profiling for" 30 || fail "the session did not start: $(cat "$TMP/r.err")"
W3=$(rel_cmd "fork-as $NOBODY" '^forked ' | awk '{print $2}')
PIDS+=("$W3")
wait_for_line "$TOUT" "^worker $W3 ready" 30 || fail "worker $W3 did not get ready: $(tail -3 "$TOUT")"
wait_for_line "$TMP/r.err" "pid $W3 .*appeared during the session" 30 || fail "the session did not see $W3: $(cat "$TMP/r.err")"
sock3=$(stat -c '%i %U %z' "$SOCKDIR/$W3.sock" 2>&1)
kill -USR1 "$W3"
wait_for_line "$TOUT" "^worker $W3 exiting ok" 30 || fail "worker $W3 did not exit: $(tail -3 "$TOUT")"
[ "$(rel_cmd "reap $W3" "^reaped $W3 ")" = "reaped $W3 code=7" ] || fail "worker $W3 ended otherwise"
wait_for_line "$TMP/r.err" "pid $W3 .*exited during the session (exit code 7): the snapshot its profiler wrote" 30 ||
    fail "the session lost the last snapshot of $W3: $(cat "$TMP/r.err")"
kill -INT "$H"
wait "$H" || fail "the session failed: $(tail -3 "$TMP/r.err")"
python3 - "$TMP/r.json" "$W3" <<'PY' || fail "the report lacks the last moment of $W3 (above)"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
w = int(sys.argv[2])
p = {p["pid"]: p for p in d["processes"]}[w]
assert p["exit"] and p["exit"]["exit_code"] == 7 and p["exit"]["snapshot_at_exit"] is True, p
print("one-shot: worker", w, "exit", p["exit"])
PY
out=$(stacks_of "$TMP/r.json" worker_last_alloc)
echo "$out" | head -1
left=$(find "$SOCKDIR" -maxdepth 1 -name "$W3.*")
if [ -n "$left" ]; then
    # What is left, against the socket the worker had while it lived.
    echo "worker $W3's socket while it lived: $sock3; now:"
    stat -c '%n %i %U %z' $left
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); print("connect:", s.connect_ex(sys.argv[1]))' "$SOCKDIR/$W3.sock"
    grep "$W3" "$TMP/r.err"
    fail "files of worker $W3 left after the session: $left"
fi
rel_cmd check "^check errors=0" >/dev/null
ok "a worker that became nobody left its last snapshot (exit code 7, its own blocks only), to snapshot and to a one-shot session; nothing left open or behind"
