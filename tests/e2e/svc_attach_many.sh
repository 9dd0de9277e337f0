#!/usr/bin/env bash
# svc_attach_many: attach, status, snapshot and detach take a selection of
# Covers: cli/cmd/many.c, cli/session/gather.c, cli/session/many.c
# several processes (issue 28): `attach -p W1,W2,W3` attaches all three at
# once; `snapshot -p MASTER --children` asks every profiler in the tree
# with one request and writes one report (the master, not attached, is
# said and is no failure); `status -p W1,W2,W3 --format json` is an array
# of the three; `detach -p MASTER --children` leaves every worker untraced
# and unhooked; an unknown pid among them is listed with its reason while
# the others go on.
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 3 2
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 3 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
# A pid that is no process: said, the others attached, exit 3 (it was given).
GONE=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
kill -0 "$GONE" 2>/dev/null && fail "pid $GONE exists"
SEL="${W[0]},${W[1]},${W[2]}"
timeout -k 5 120 "$HEAPINJECT" attach -p "$SEL,$GONE" --rate 64K 2>"$TMP/a.err"; rc=$?
cat "$TMP/a.err"
[ $rc = 3 ] || fail "attach with a missing pid: exit $rc, not 3"
grep -q "pid $GONE (?): not attached: no such process" "$TMP/a.err" || fail "the missing pid is not listed with its reason"
grep -q "3 of 4 processes attached" "$TMP/a.err" || fail "the 3 workers were not all attached"
timeout -k 5 60 "$HEAPINJECT" status -p "$SEL" --interval 0.2 --format json >"$TMP/st.json" 2>"$TMP/st.err" ||
    fail "status of 3: $(cat "$TMP/st.err")"
python3 -c "
import json, sys
d = json.load(open('$TMP/st.json'))
assert [x['pid'] for x in d] == [${W[0]}, ${W[1]}, ${W[2]}] and all(x['attached'] for x in d), d
" || fail "status --format json of 3 is not an array of the 3, attached"
# The leaker's samples accumulate before the snapshot is asked for.
wait_for_line "$TMP/svc_prefork.out" ready 1
sleep 1
timeout -k 5 60 "$HEAPINJECT" snapshot -p "$TPID" --children --format json -o "$TMP/s.json" 2>"$TMP/s.err" ||
    fail "snapshot of the tree: $(cat "$TMP/s.err")"
cat "$TMP/s.err"
grep -q "pid $TPID (svc_prefork): not snapshotted: no profiler attached" "$TMP/s.err" || fail "the master is not said"
python3 - "$TMP/s.json" "$LEAKER" "${W[@]}" <<'PY' || fail "the tree's snapshot is wrong (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
leaker, workers = int(sys.argv[2]), sorted(int(x) for x in sys.argv[3:])
assert sorted(p["pid"] for p in d["processes"]) == workers, d["processes"]
leak = {s["pid"] for s in d["stacks"] if any(f.get("function") == "svc_leak_request" for f in s["frames"])}
assert leak == {leaker}, leak
assert "snapshots taken within" in d["note"], d.get("note")
PY
timeout -k 5 60 "$HEAPINJECT" detach -p "$TPID" --children 2>"$TMP/d.err" || fail "detach of the tree: $(cat "$TMP/d.err")"
grep -q "detached from 3 processes; every allocator slot of each read back" "$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
for p in "${W[@]}"; do
    [ "$(awk '/^TracerPid:/{print $2}' "/proc/$p/status")" = 0 ] || fail "pid $p is still traced"
    "$HEAPINJECT" detach -p "$p" -q 2>/dev/null; rc=$?
    [ $rc = 7 ] || fail "pid $p still has a profiler (detach exit $rc)"
done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 3" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "attach/status/snapshot/detach of 3 workers as one selection; the leak under pid $LEAKER only; all detached"
