#!/usr/bin/env bash
# svc_follow: `attach -p MASTER --children` follows the tree as it grows
# (issue 28, item 2 from the cli). A worker the master forks after the
# attach gets a profiler of its own; `status` and `snapshot` of the tree
# (-p MASTER --children) include it, its leak (svc_leak_late_request)
# credited to its pid; `detach -p MASTER` detaches the followed children
# too: no socket, no agent thread, no allocator slot hooked in any
# process, and every worker's data checks pass. When the late worker
# exits, the next snapshot of the tree still has its leak, from the last
# snapshot it left (marked exit code 0), and takes the file. Was: attach --children
# followed nothing; the late worker ran unprofiled.
. "$(dirname "$0")/lib.sh"
FUID=$(id -u)
SOCKDIR=/tmp/heapinject-$FUID
[ -d /run/user/$FUID ] && SOCKDIR=/run/user/$FUID/heapinject
start_target svc_prefork 2 9 exit   # 2 workers, none leaking; workers end with exit()
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
timeout -k 5 120 "$HEAPINJECT" attach -p "$TPID" --children --rate 64K --ttl 300 2>"$TMP/a.err" ||
    fail "attach --children failed: $(cat "$TMP/a.err")"
cat "$TMP/a.err"
grep -q "Children they fork from now on are profiled too" "$TMP/a.err" || fail "attach does not say it follows forks"
kill -USR1 "$TPID"
wait_for_line "$TMP/svc_prefork.out" "^late " 20 || fail "the master did not fork a late worker"
LATE=$(awk '/^late /{print $2; exit}' "$TMP/svc_prefork.out")
PIDS+=("$LATE")
[ -S "$SOCKDIR/$LATE.sock" ] || fail "the late worker $LATE has no profiler of its own: $(ls -la "$SOCKDIR")"
"$HEAPINJECT" status -p "$TPID" --children --format json >"$TMP/st.json" 2>"$TMP/st.err" ||
    fail "status of the tree: $(cat "$TMP/st.err")"
python3 - "$TMP/st.json" "$LATE" "$TPID" "${W[@]}" <<'PY' || fail "status of the tree (above)"
import json, sys
a = json.load(open(sys.argv[1]))
want = sorted(int(x) for x in sys.argv[2:])
assert sorted(o["pid"] for o in a) == want, a
assert all(o["attached"] for o in a), [(o["pid"], o["attached"]) for o in a]
PY
# Its leak is 16 KiB per 2 ms: sampled at 64K within a second.
for ((i = 0; i < 60; i++)); do
    "$HEAPINJECT" snapshot -p "$TPID" --children --format json -o "$TMP/s.json" 2>"$TMP/s.err" ||
        fail "snapshot of the tree: $(cat "$TMP/s.err")"
    python3 - "$TMP/s.json" "$LATE" "$TPID" "${W[@]}" <<'PY' && break
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
late, want = int(sys.argv[2]), sorted(int(x) for x in sys.argv[2:])
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == want, sorted(procs)
leak = {}
for s in d["stacks"]:
    if any(f.get("function") == "svc_leak_late_request" for f in s["frames"]):
        leak[s["pid"]] = leak.get(s["pid"], 0) + s["live_bytes"]
assert list(leak) == [late] and leak[late] >= 1 << 20, leak
print("late", late, "leak", leak[late])
PY
    sleep 0.5
done
((i < 60)) || fail "the snapshot of the tree never showed the late worker's leak: $(cat "$TMP/s.err")"
# The late worker ends (exit(0)): its profiler leaves its last snapshot,
# which the next snapshot of the tree still shows, under its pid.
kill -TERM "$LATE"
wait_for_line "$TMP/svc_prefork.out" "worker $LATE ok" 20 || fail "the late worker's checks: $(cat "$TMP/svc_prefork.out")"
for ((i = 0; i < 100; i++)); do [ -e "$SOCKDIR/$LATE.sock" ] || break; sleep 0.05; done
[ -f "$SOCKDIR/$LATE.last" ] || fail "the late worker left no last snapshot: $(ls -la "$SOCKDIR")"
"$HEAPINJECT" snapshot -p "$TPID" --children --format json -o "$TMP/s2.json" 2>"$TMP/s2.err" ||
    fail "snapshot of the tree after the late worker exited: $(cat "$TMP/s2.err")"
cat "$TMP/s2.err"
grep -q "pid $LATE (child of $TPID) exited since attach (exit code 0): the snapshot it left is in the report" \
    "$TMP/s2.err" || fail "the snapshot does not say the late worker's last snapshot is in it"
python3 - "$TMP/s2.json" "$LATE" "$TPID" "${W[@]}" <<'PY' || fail "the late worker's last snapshot is not in the tree's report (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
late, want = int(sys.argv[2]), sorted(int(x) for x in sys.argv[2:])
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == want, sorted(procs)
x = procs[late]["exit"]
assert x and x["exit_code"] == 0 and x["snapshot_at_exit"] is True, x
leak = {}
for s in d["stacks"]:
    if any(f.get("function") == "svc_leak_late_request" for f in s["frames"]):
        leak[s["pid"]] = leak.get(s["pid"], 0) + s["live_bytes"]
assert list(leak) == [late] and leak[late] >= 1 << 20, leak
PY
[ ! -e "$SOCKDIR/$LATE.last" ] || fail "the late worker's last snapshot file is left after the snapshot took it"
# Another worker forked: the detach of the master takes its profiler too.
kill -USR1 "$TPID"
for ((i = 0; i < 400; i++)); do [ "$(grep -c '^late ' "$TMP/svc_prefork.out")" = 2 ] && break; sleep 0.05; done
LATE2=$(awk '/^late /{print $2}' "$TMP/svc_prefork.out" | tail -1)
[ -n "$LATE2" ] && [ "$LATE2" != "$LATE" ] || fail "the master did not fork a second late worker"
PIDS+=("$LATE2")
[ -S "$SOCKDIR/$LATE2.sock" ] || fail "the second late worker $LATE2 has no profiler of its own"
"$HEAPINJECT" detach -p "$TPID" 2>"$TMP/d.err" || fail "detach -p MASTER failed: $(cat "$TMP/d.err")"
cat "$TMP/d.err"
grep -q "detached too: .*$LATE2" "$TMP/d.err" || fail "detach did not name the followed children"
# Each one's allocator slots read back by detach: none points into the profiler.
grep -q "detached from 4 processes; every allocator slot of each read back: none points into the profiler" \
    "$TMP/d.err" || fail "detach did not verify the 4 processes' slots"
for p in "$TPID" "${W[@]}" "$LATE2"; do
    [ ! -e "$SOCKDIR/$p.sock" ] || fail "pid $p still has a socket"
    grep -lx heapinject /proc/"$p"/task/*/comm 2>/dev/null && fail "pid $p still has an agent thread"
    "$HEAPINJECT" status -p "$p" >"$TMP/st1" 2>&1; rc=$?
    [ $rc = 7 ] || fail "pid $p: status exit $rc after detach: $(cat "$TMP/st1")"
    assert_not_traced "$p"
done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 4" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "attach --children followed the late worker $LATE: in status and snapshot of the tree with its leak; detach -p $TPID took it too"
