#!/usr/bin/env bash
# svc_children: `heapinject -p MASTER --children` on a pre-fork server of 3
# Covers: cli/cmd/profile_many.c, cli/process/children.c, cli/profile/merge.c, payload/serve/sock.c
# workers, one leaking (issue 28). One command attaches to the master and
# every worker at once, and the merged report credits the leak
# (svc_leak_request) to the leaking worker's pid only. Afterwards no
# process is traced, none has a profiler (detach finds none), every slot
# was read back, and each worker's own check of its blocks passes.
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 3 1
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 3 ] && [ -n "$LEAKER" ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --children --duration 2 --rate 64K --format json -o "$TMP/r.json" \
    2>"$TMP/r.err" || fail "the session failed: $(cat "$TMP/r.err")"
cat "$TMP/r.err"
grep -q "attaching to 4 processes" "$TMP/r.err" || fail "the master and its 3 workers are not the selection"
grep -q "every allocator slot of each read back: none points into the profiler" "$TMP/r.err" ||
    fail "the slots were not all read back: $(cat "$TMP/r.err")"
python3 - "$TMP/r.json" "$TPID" "$LEAKER" "${W[@]}" <<'PY' || fail "the merged report is wrong (above)"
import sys, hi_profile
doc = hi_profile.load(sys.argv[1])
master, leaker, workers = int(sys.argv[2]), int(sys.argv[3]), [int(x) for x in sys.argv[4:]]
procs = {p["pid"]: p for p in doc["processes"]}
assert sorted(procs) == sorted([master] + workers), procs.keys()
for w in workers:
    assert procs[w]["ppid"] == master, procs[w]
    assert procs[w]["comm"] == "svc_prefork", procs[w]
    assert procs[w]["attach_ms"] is not None and procs[w]["attach_ms"] > 0, procs[w]
    assert procs[w]["rss_bytes"] > 0, procs[w]
def funcs(s):
    return [f.get("function") for f in s["frames"]]
leak = [s for s in doc["stacks"] if "svc_leak_request" in funcs(s)]
assert leak, "no stack through svc_leak_request"
assert {s["pid"] for s in leak} == {leaker}, [s["pid"] for s in leak]
assert sum(s["live_bytes"] for s in leak) > 2 << 20, [s["live_bytes"] for s in leak]
serve = {s["pid"] for s in doc["stacks"] if "svc_serve_request" in funcs(s)}
assert serve == set(workers), serve  # every worker's own requests, under its own pid
print("leak under pid", leaker, "only;", len(doc["stacks"]), "stacks of", len(procs), "processes")
PY
for p in "$TPID" "${W[@]}"; do
    assert_alive "$p"
    [ "$(awk '/^TracerPid:/{print $2}' "/proc/$p/status")" = 0 ] || fail "pid $p is still traced"
    "$HEAPINJECT" detach -p "$p" -q 2>/dev/null; rc=$?
    [ $rc = 7 ] || fail "pid $p: a profiler is still attached (detach exit $rc, not 7)"
done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 3" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
for w in "${W[@]}"; do grep -q "^worker $w ok$" "$TMP/svc_prefork.out" || fail "worker $w did not check out"; done
ok "one command profiled the master and 3 workers; the leak is under pid $LEAKER only; all detached, data intact"
