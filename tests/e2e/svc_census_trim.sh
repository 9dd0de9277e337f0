#!/usr/bin/env bash
# svc_census_trim: `census` and `trim` of several processes (issue 28):
# -p MASTER --children gives one census per process, one after the other
# (json: an array; each census is its own process's: the leaking worker's
# heap holds megabytes of 16 KiB blocks the other worker does not), and
# `trim -p A,B,GONE` trims A and B, lists GONE with its reason, goes on,
# and exits 3 (the README's code for a pid given that is no process). Each
# command attached for the call only: nothing is left attached, and every
# worker's data checks pass.
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 2 1
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
OTHER=${W[0]}; [ "$OTHER" = "$LEAKER" ] && OTHER=${W[1]}
# The leaker keeps 16 KiB a request: 8 MiB within a few seconds.
for ((i = 0; i < 200; i++)); do
    (( $(awk '/^RssAnon/{print $2}' /proc/"$LEAKER"/status) > 12 * 1024 )) && break
    sleep 0.05
done
timeout -k 5 180 "$HEAPINJECT" census -p "$TPID" --children --format json -o "$TMP/c.json" 2>"$TMP/c.err" ||
    fail "census of the tree failed: $(cat "$TMP/c.err")"
cat "$TMP/c.err"
grep -q "3 of 3 processes censused" "$TMP/c.err" || fail "census did not say it took 3"
python3 - "$TMP/c.json" "$TPID" "$LEAKER" "$OTHER" <<'PY' || fail "the censuses are not the tree's (above)"
import json, sys
a = json.load(open(sys.argv[1]))
master, leaker, other = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert isinstance(a, list) and sorted(o["pid"] for o in a) == sorted([master, leaker, other]), a
by = {o["pid"]: o["census"] for o in a}
assert all(o["comm"] == "svc_prefork" for o in a)
ul, uo = by[leaker]["in_use"]["bytes"], by[other]["in_use"]["bytes"]
print("in use: leaker", ul, "other", uo, "master", by[master]["in_use"]["bytes"])
assert ul > uo + (4 << 20), (ul, uo)
PY
"$HEAPINJECT" census -p "$TPID" --children >"$TMP/c.txt" 2>"$TMP/c2.err" || fail "text census: $(cat "$TMP/c2.err")"
[ "$(grep -c '^=== pid [0-9]* (svc_prefork) ===$' "$TMP/c.txt")" = 3 ] || fail "text census: not 3 sections: $(head "$TMP/c.txt")"
"$HEAPINJECT" census -p "$TPID" --children --format html -o "$TMP/c.html" 2>"$TMP/h.err"; rc=$?
[ $rc = 2 ] && grep -q "give one -p PID" "$TMP/h.err" || fail "html of several: exit $rc, $(cat "$TMP/h.err")"
sleep 0 & GONE=$!; wait $GONE   # a pid that is no process now
"$HEAPINJECT" trim -p "$LEAKER,$GONE,$OTHER" >"$TMP/t.out" 2>"$TMP/t.err"; rc=$?
cat "$TMP/t.out" "$TMP/t.err"
[ $rc = 3 ] || fail "trim with a pid gone: exit $rc, want 3"
for p in "$LEAKER" "$OTHER"; do
    grep -Eq "^pid $p \(svc_prefork\): glibc malloc_trim\(0\) took [0-9.]+ ms; RSS .* -> " "$TMP/t.out" ||
        fail "pid $p was not trimmed"
done
grep -q "pid $GONE (.*): not trimmed: no such process" "$TMP/t.err" || fail "the pid gone is not listed with its reason"
grep -q "^2 of 3 processes trimmed; RSS" "$TMP/t.out" || fail "no summary line"
"$HEAPINJECT" trim -p "$TPID" --children >"$TMP/t2.out" 2>"$TMP/t2.err" || fail "trim --children: $(cat "$TMP/t2.err")"
grep -q "^3 of 3 processes trimmed" "$TMP/t2.out" || fail "trim --children: $(cat "$TMP/t2.out")"
for p in "$TPID" "${W[@]}"; do
    "$HEAPINJECT" status -p "$p" >/dev/null 2>&1; rc=$?
    [ $rc = 7 ] || fail "pid $p: status exit $rc: something is left attached"
    assert_not_traced "$p"
done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "census and trim of the tree: one census per process (the leak in the leaker's), trim went on past a pid gone"
