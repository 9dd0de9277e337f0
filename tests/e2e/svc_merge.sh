#!/usr/bin/env bash
# svc_merge: `heapinject report A.json B.json` (issue 28). Two workers of a
# Covers: cli/cmd/report_many.c, cli/report/processes.c
# pre-fork server profiled by two sessions that overlap (A 3 s, B 1 s
# started once A is attached) make one report: every stack keeps its pid,
# the processes are listed, the duration is the span from the first
# attach to the last snapshot (about 3 s), not the sum (4 s); the text
# shows a per-process table and --by process groups by pid; the pprof file
# carries numeric label pid and string label comm on every sample (read by
# go tool pprof when installed, and by our own reader).
. "$(dirname "$0")/lib.sh"
start_target svc_prefork 2 0
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
OTHER=${W[1]}
[ "$LEAKER" = "${W[0]}" ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
timeout -k 5 120 "$HEAPINJECT" -p "$LEAKER" --duration 3 --rate 64K --format json -o "$TMP/a.json" 2>"$TMP/a.err" &
A=$!
wait_for_line "$TMP/a.err" "attached to pid" 60 || fail "session A did not attach: $(cat "$TMP/a.err")"
timeout -k 5 120 "$HEAPINJECT" -p "$OTHER" --duration 1 --rate 64K --format json -o "$TMP/b.json" 2>"$TMP/b.err" ||
    fail "session B failed: $(cat "$TMP/b.err")"
wait "$A" || fail "session A failed: $(cat "$TMP/a.err")"

"$HEAPINJECT" report "$TMP/a.json" "$TMP/b.json" --format json -o "$TMP/m.json" 2>"$TMP/m.err" ||
    fail "report A B failed: $(cat "$TMP/m.err")"
python3 - "$TMP/a.json" "$TMP/b.json" "$TMP/m.json" "$LEAKER" "$OTHER" <<'PY' || fail "the merged JSON is wrong (above)"
import sys, hi_profile
a, b, m = (hi_profile.load(p) for p in sys.argv[1:4])
leaker, other = int(sys.argv[4]), int(sys.argv[5])
assert sorted(p["pid"] for p in m["processes"]) == sorted([leaker, other]), m["processes"]
assert all(p["comm"] == "svc_prefork" for p in m["processes"]), m["processes"]
assert len(m["stacks"]) == len(a["stacks"]) + len(b["stacks"]), (len(m["stacks"]), len(a["stacks"]), len(b["stacks"]))
def funcs(s):
    return [f.get("function") for f in s["frames"]]
assert {s["pid"] for s in m["stacks"] if "svc_leak_request" in funcs(s)} == {leaker}
assert {s["pid"] for s in m["stacks"] if "svc_serve_request" in funcs(s)} == {leaker, other}
live = lambda d, pid: sum(s["live_bytes"] for s in d["stacks"] if s.get("pid", d["pid"]) == pid)
assert abs(live(m, leaker) - live(a, leaker)) < 1 and abs(live(m, other) - live(b, other)) < 1
span, total = m["duration_s"], a["duration_s"] + b["duration_s"]
assert max(a["duration_s"], b["duration_s"]) - 0.01 <= span < total - 0.5, (span, a["duration_s"], b["duration_s"])
print("merged: %d stacks, duration %.2f s (sessions %.2f + %.2f s)" % (len(m["stacks"]), span, a["duration_s"], b["duration_s"]))
PY
"$HEAPINJECT" report "$TMP/a.json" "$TMP/b.json" >"$TMP/m.txt" 2>&1 || fail "text report failed: $(cat "$TMP/m.txt")"
grep -q "^heapinject: 2 processes (pids" "$TMP/m.txt" || fail "no header of 2 processes: $(head "$TMP/m.txt")"
grep -Eq "^$LEAKER +[0-9]+ +svc_prefork .* svc_leak_request$" "$TMP/m.txt" ||
    fail "the process table does not show the leaker's top stack: $(cat "$TMP/m.txt")"
grep -Eq "^#1 +pid $LEAKER \(svc_prefork\)" "$TMP/m.txt" || fail "the top stack is not the leaker's: $(cat "$TMP/m.txt")"
"$HEAPINJECT" report "$TMP/a.json" "$TMP/b.json" --by process >"$TMP/p.txt" 2>&1 || fail "--by process failed"
grep -q "2 processes; top 2 by live bytes" "$TMP/p.txt" || fail "--by process: $(cat "$TMP/p.txt")"
grep -Eq "svc_prefork +\(pid $LEAKER\)" "$TMP/p.txt" || fail "--by process does not name pid $LEAKER: $(cat "$TMP/p.txt")"

"$HEAPINJECT" report "$TMP/a.json" "$TMP/b.json" --format pprof -o "$TMP/m.pb.gz" || fail "pprof report failed"
# Our reader: the pid label of each sample comes back as the stack's pid.
"$HEAPINJECT" report "$TMP/m.pb.gz" --format json -o "$TMP/back.json" || fail "the pprof file does not read back"
python3 - "$TMP/back.json" "$LEAKER" "$OTHER" <<'PY' || fail "the pprof labels did not read back"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
leaker, other = int(sys.argv[2]), int(sys.argv[3])
assert {s["pid"] for s in d["stacks"]} == {leaker, other}, {s["pid"] for s in d["stacks"]}
assert {p["pid"]: p["comm"] for p in d["processes"]} == {leaker: "svc_prefork", other: "svc_prefork"}, d["processes"]
assert {s["pid"] for s in d["stacks"] if any(f.get("function") == "svc_leak_request" for f in s["frames"])} == {leaker}
PY
if command -v go >/dev/null; then
    HOME=$TMP timeout -k 5 120 go tool pprof -tags "$TMP/m.pb.gz" >"$TMP/tags.txt" 2>&1 || fail "go tool pprof: $(cat "$TMP/tags.txt")"
    grep -Eq "^ *comm: " "$TMP/tags.txt" && grep -q "svc_prefork" "$TMP/tags.txt" || fail "go tool pprof sees no comm label: $(cat "$TMP/tags.txt")"
    grep -Eq "^ *pid: " "$TMP/tags.txt" && grep -q "$LEAKER" "$TMP/tags.txt" && grep -q "$OTHER" "$TMP/tags.txt" ||
        fail "go tool pprof sees no pid label with both pids: $(cat "$TMP/tags.txt")"
    HOME=$TMP timeout -k 5 120 go tool pprof -top -sample_index=inuse_space -tagfocus="pid=$LEAKER" "$TMP/m.pb.gz" >"$TMP/focus.txt" 2>&1 ||
        fail "go tool pprof -tagfocus: $(cat "$TMP/focus.txt")"
    grep -q svc_leak_request "$TMP/focus.txt" || fail "-tagfocus pid=$LEAKER lost the leak: $(cat "$TMP/focus.txt")"
    echo "go tool pprof reads the labels"
fi
assert_alive "$TPID"
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "two sessions of two processes merged: pids per stack, span not sum, pid/comm labels in pprof"
