#!/bin/bash
# cli_report_census.sh - `heapinject report` keeps a census: the JSON of
# `heapinject census --format json` re-renders as the census text, the same
# as `heapinject census` printed for the same (idle) heap but for the line
# of timings (two censuses, two forks: their stall and scan differ; the
# re-rendered line must say the file's own figures), and as JSON identical
# to the file, byte for byte. A one-shot profile taken with --census keeps
# its census section through `report`, in text and in JSON.
. "$(dirname "$0")/lib.sh"

start_target census_truth
"$HEAPINJECT" census -q -p "$TPID" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census (text) failed: $(cat "$TMP/c.err")"
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census (json) failed: $(cat "$TMP/c.err")"
"$HEAPINJECT" report "$TMP/c.json" >"$TMP/r.txt" 2>"$TMP/r.err" || fail "report of a census JSON failed: $(cat "$TMP/r.err")"
# Two censuses: their cost lines differ (checked against the file below),
# and only the second has a prediction from the one before;
# a block two roots reach is 'shared', and what a thread's
# stack or our agent's last words still point to differs from one copy to
# the next, so the roots' figures (and how many keep blocks of their own)
# may move a little (and the tcache's count: each attach's start thread
# leaves its TLS vector there, freed at its join), and a row for a thread's stack (alone, or sharing a
# block with a global) may come or go between the two copies; the globals'
# names and every other line may not.
roots_plain() { # the roots' rows without figures, in name order, after the rest
    awk '/^Roots that hold the most/ {r = 1} r && /^$/ {r = 0}
         r && /^  \.\.\. [0-9]+ more/ {next}
         r && /^ +[0-9.]+ [KMG]?i?B +[0-9.]+k? blocks? / {sub(/^ +[0-9.]+ [KMG]?i?B +[0-9.]+k? blocks? +/, "ROOT "); print > "/dev/stderr"; next}
         /^  the copy.s cost: / {next}
         /^  predicted before the fork / {next}
         /^  free / {gsub(/tcache [0-9.]+k? blocks [0-9.]+ [KMG]?i?B/, "tcache N blocks N B")}
         {print}' "$1" 2>"$1.roots"
    grep -v -E '^ROOT (shared: |stack of thread |anonymous mapping )' "$1.roots" | sort
}
roots_plain "$TMP/c.txt" >"$TMP/c.plain"
roots_plain "$TMP/r.txt" >"$TMP/r.plain"
diff "$TMP/c.plain" "$TMP/r.plain" >"$TMP/d.txt"
# Only the timing line may differ, and it says the JSON's figures.
changed=$(grep -c '^[<>]' "$TMP/d.txt")
if [ "$changed" != 0 ]; then
    [ "$changed" = 2 ] && grep -q '^> *taken in a copy-on-write fork of the process: stall' "$TMP/d.txt" ||
        fail "the census re-rendered from its JSON differs from the census text: $(head -20 "$TMP/d.txt")"
fi
python3 - "$TMP/c.json" "$TMP/r.txt" <<'PY' || fail "the re-rendered timing line does not say the file's figures"
import json, re, sys
c = json.load(open(sys.argv[1]))["census"]
line = [l for l in open(sys.argv[2]) if "taken in a copy-on-write fork" in l][0]
# The line is rendered from the file's nanosecond figures, the JSON's _ms
# fields are those rounded to 3 places: a figure at a rounding edge
# (wall 302.500 ms in the file, 302.5004 in ns) may print one unit apart
# (ci18: "303 ms in all" for wall_ms 302.500). So each figure is compared
# within its printed precision.
m = re.search(r"stall ([0-9.]+) ms \(threads held for their registers, the fork ([0-9.]+) ms of it\), "
              r"scan ([0-9.]+) ms, ([0-9.]+) ms in all", line)
assert m, line
got = [float(x) for x in m.groups()]
want = [c["threads_held_ms"], c["fork_ms"], c["scan_ms"], c["wall_ms"]]
for g, w, unit in zip(got, want, (0.1, 0.1, 1, 1)):
    assert abs(g - w) <= unit * 0.5 + 0.001, (got, want, line)
k = c.get("copy_cost")
if k:
    cost = [l for l in open(sys.argv[2]) if "the copy's cost:" in l]
    # counts of 1,000 and more are printed rounded (1.2k)
    assert cost and (k["minor_faults"] >= 1000 or ("%d minor faults" % k["minor_faults"]) in cost[0]), (k, cost)
PY
lines=$(wc -l <"$TMP/r.txt")
[ "$lines" -gt 30 ] || fail "the re-rendered census is short: $(cat "$TMP/r.txt")"
grep -q "g_list (census_truth)" "$TMP/r.txt" || fail "the re-rendered census lost the roots"
grep -q "|XXXXXXXXXXXXXXXX|" "$TMP/r.txt" || fail "the re-rendered census lost the previews"
"$HEAPINJECT" report "$TMP/c.json" --format json -o "$TMP/r.json" || fail "report --format json of a census failed"
cmp -s "$TMP/c.json" "$TMP/r.json" || fail "the census JSON written again differs: $(diff "$TMP/c.json" "$TMP/r.json" | head -10)"
"$HEAPINJECT" report "$TMP/c.json" --format pprof -o "$TMP/r.pb.gz" 2>"$TMP/r.err"
[ $? = 2 ] && grep -q "is a census: it is written as text, json or html" "$TMP/r.err" || fail "report --format pprof of a census: $(cat "$TMP/r.err")"
ok "report of a census JSON: the census text again ($lines lines, only the timing line of the other run differs), JSON byte-identical"

# A one-shot profile with --census: report keeps the census section.
"$HEAPINJECT" -p "$TPID" --duration 0.5 --census --format json -q -o "$TMP/p.json" || fail "heapinject -p --census failed"
"$HEAPINJECT" report "$TMP/p.json" >"$TMP/p.txt" || fail "report of the profile failed"
grep -q "^Census of pid $TPID (census_truth)" "$TMP/p.txt" || fail "report dropped the profile's census section: $(tail -5 "$TMP/p.txt")"
grep -q "g_list (census_truth)" "$TMP/p.txt" || fail "the profile's census lost its roots in report"
"$HEAPINJECT" report "$TMP/p.json" --format json -o "$TMP/p2.json" || fail "report --format json of the profile failed"
python3 - "$TMP/p.json" "$TMP/p2.json" <<'PY' || fail "the profile's census is not the same after report"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
assert "census" in b, list(b)
assert a["census"] == b["census"], [k for k in a["census"] if a["census"][k] != b["census"].get(k)]
PY
kill -USR1 "$TPID"
wait_for_line "$TMP/census_truth.out" "verify" 10 && grep -q "verify ok" "$TMP/census_truth.out" || fail "target data damaged"
ok "report of a profile taken with --census keeps the census (text and json)"
