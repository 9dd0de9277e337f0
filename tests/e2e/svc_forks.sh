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
wait "$H" || fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
grep -q "pid $LATE (svc_prefork) appeared during the session (parent $TPID): profiled from its first allocation" \
    "$TMP/r.err" || fail "the late worker's fork was not followed"
python3 - "$TMP/r.json" "$LATE" "$TPID" "${W[@]}" <<'PY' || fail "the report does not have the late worker (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
late, master, workers = int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4:]]
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == sorted([master, late] + workers), sorted(procs)
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
