#!/usr/bin/env bash
# svc_forks: `heapinject -p MASTER --children` follows the tree (issue 28):
# a worker the master forks during the session (a worker recycled, a new
# connection's backend) joins the session once it appears, is marked
# started_during_session, and its own leak (svc_leak_late_request) is in
# the report under its pid only; it is detached with the others and its
# data checks pass. Its fork is followed: it is profiled from its first
# allocation, a 1 MiB leak made before anything else (svc_leak_at_birth),
# which the report has under its pid, once. Was: the session attached the
# worker up to 0.5 s after it appeared, its first allocation not seen.
# A child forked and ended between two looks at the tree (a connection's
# backend: svc_brief_child keeps 1 MiB and exits at once) is in the
# report by the snapshot its followed profiler left as it ended, marked
# with its exit, and its file is gone (was: never seen, the file left).
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 2 9   # 2 workers, none of them leaking
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --children --duration 4 --rate 64K --format json -o "$TMP/r.json" \
    2>"$TMP/r.err" &
H=$!
wait_for_line "$TMP/r.err" "profiling for" 60 || fail "the session did not start: $(cat "$TMP/r.err")"
kill -USR1 "$TPID"
wait_for_line "$TMP/svc_prefork.out" "^late " 20 || fail "the master did not fork a late worker"
LATE=$(awk '/^late /{print $2}' "$TMP/svc_prefork.out")
PIDS+=("$LATE")
kill -USR2 "$TPID"
wait_for_line "$TMP/svc_prefork.out" "^brief " 20 || fail "the master did not fork a brief child"
grep -q "^brief [0-9]* ok" "$TMP/svc_prefork.out" || fail "the brief child failed: $(grep brief "$TMP/svc_prefork.out")"
BRIEF=$(awk '/^brief /{print $2}' "$TMP/svc_prefork.out")
wait "$H" || fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
grep -q "pid $LATE (svc_prefork) appeared during the session (parent $TPID): profiled from its first allocation" \
    "$TMP/r.err" || fail "the late worker's fork was not followed"
grep -q "1 process forked and ended between two looks at the tree" "$TMP/r.err" ||
    fail "the brief child $BRIEF is not said"
left=$(ls /tmp/heapinject-"$(id -u)"/ 2>/dev/null | grep -E "^($BRIEF|$TPID|$LATE)\." )
[ -z "$left" ] || fail "files left behind: $left"
python3 - "$TMP/r.json" "$LATE" "$BRIEF" "$TPID" "${W[@]}" <<'PY' || fail "the report does not have the late worker and the brief child (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
late, brief, master, workers = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), [int(x) for x in sys.argv[5:]]
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == sorted([master, late, brief] + workers), sorted(procs)
b = procs[brief]
assert b["started_during_session"] is True and b["ppid"] == master and b.get("exit", {}).get("exit_code") == 0, b
kept = sum(s["live_bytes"] for s in d["stacks"] if s["pid"] == brief and any(f.get("function") == "svc_brief_child" for f in s["frames"]))
assert kept >= 512 << 10, f"the brief child's 1 MiB: {kept} B in the report"
assert procs[late]["started_during_session"] is True and procs[late]["ppid"] == master, procs[late]
assert all(procs[p]["started_during_session"] is False for p in [master] + workers)
leak = {s["pid"] for s in d["stacks"] if any(f.get("function") == "svc_leak_late_request" for f in s["frames"])}
assert leak == {late}, leak
birth = [s for s in d["stacks"] if any(f.get("function") == "svc_leak_at_birth" for f in s["frames"])]
assert [s["pid"] for s in birth] == [late], [(s["pid"], s.get("live_bytes")) for s in birth]
print("birth leak:", {k: v for k, v in birth[0].items() if k != "frames"})
PY
for p in "$TPID" "${W[@]}" "$LATE"; do assert_not_traced "$p"; done
"$HEAPINJECT" detach -p "$LATE" -q 2>/dev/null; [ $? = 7 ] || fail "the late worker still has a profiler"
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 3" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "a worker forked during the session joined it; its leak is under its pid; all detached, data intact"
