#!/usr/bin/env bash
# payload_truncated: the report says how many sampled stacks end early
# (issue 17: pl_stack_truncated was counted but never reported).
# build/targets/pl_nocfi allocates half its blocks through asm_alloc, an
# assembly function with no unwind information that zeroes rbp, so no
# rule and no frame-pointer guess can step it; the other half through a
# C function. At --rate 1 every allocation is a walk:
# - JSON "stack_walks": walks = samples, truncated about half of them;
#   every stack through asm_alloc is that one frame, the C one reaches main;
# - the text report (live, and `report FILE` reading the JSON or the pprof
#   file back) says "N of M sampled stacks (x%) end early";
# - pl_sigstack, whose stacks cross a signal frame and frameless functions
#   but can all be walked, reports 0 truncated and no such line.
# Covers: payload/record/cfi.c
. "$(dirname "$0")/lib.sh"

start_target pl_nocfi
"$HEAPINJECT" -p "$TPID" --rate 1 --duration 1.5 --format json -o "$TMP/nocfi.json" 2>"$TMP/nocfi.err" ||
    fail "session failed: $(cat "$TMP/nocfi.err")"
assert_alive "$TPID"
python3 - "$TMP/nocfi.json" <<'PY' || fail "stack_walks wrong (see above)"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
w = d.get("stack_walks")
assert w, "no stack_walks in the profile"
samples = d["totals"]["samples"]
print("walks %d truncated %d samples %d" % (w["walks"], w["truncated"], samples))
assert w["walks"] == samples and samples > 100, "walks should be the samples at rate 1"
assert 0.3 * samples <= w["truncated"] <= 0.7 * samples, "about half the walks end at asm_alloc"
cut = [s for s in d["stacks"] if any(f.get("function") == "asm_alloc" for f in s["frames"])]
whole = [s for s in d["stacks"] if any(f.get("function") == "plain_alloc" for f in s["frames"])]
assert cut and whole, "both allocating functions sampled"
for s in cut:
    assert [f.get("function") for f in s["frames"]] == ["asm_alloc"], "the walk stops at asm_alloc"
for s in whole:
    assert "main" in [f.get("function") for f in s["frames"]], "the C stack reaches main"
cut_objs = sum(s["alloc_objects"] for s in cut)
assert abs(cut_objs - w["truncated"]) <= 2, "truncated walks %d vs objects of cut stacks %d" % (w["truncated"], cut_objs)
PY
"$HEAPINJECT" report "$TMP/nocfi.json" >"$TMP/nocfi.txt" 2>&1 || fail "report of the JSON failed: $(cat "$TMP/nocfi.txt")"
grep -Eq '^  [0-9]+ of [0-9]+ sampled stacks \([0-9.]+%\) end early' "$TMP/nocfi.txt" ||
    fail "the text report does not say stacks end early: $(head -12 "$TMP/nocfi.txt")"
"$HEAPINJECT" -p "$TPID" --rate 1 --duration 0.5 -o "$TMP/live.txt" 2>"$TMP/live.err" ||
    fail "live text session failed: $(cat "$TMP/live.err")"
grep -Eq 'sampled stacks \([0-9.]+%\) end early' "$TMP/live.txt" || fail "the live text report lacks the line"
"$HEAPINJECT" -p "$TPID" --rate 1 --duration 0.5 --format pprof -o "$TMP/nocfi.pb.gz" 2>"$TMP/pprof.err" ||
    fail "pprof session failed: $(cat "$TMP/pprof.err")"
"$HEAPINJECT" report "$TMP/nocfi.pb.gz" >"$TMP/pprof.txt" 2>&1 || fail "report of the pprof file failed"
grep -Eq 'sampled stacks \([0-9.]+%\) end early' "$TMP/pprof.txt" || fail "a pprof profile read back lost the count"
assert_alive "$TPID"

start_target pl_sigstack
"$HEAPINJECT" -p "$TPID" --rate 1 --duration 1 --format json -o "$TMP/sig.json" 2>"$TMP/sig.err" ||
    fail "session failed: $(cat "$TMP/sig.err")"
python3 - "$TMP/sig.json" <<'PY' || fail "a walkable target reported truncated stacks"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
w = d["stack_walks"]
print("walks %d truncated %d" % (w["walks"], w["truncated"]))
assert w["walks"] > 100 and w["truncated"] == 0
PY
"$HEAPINJECT" report "$TMP/sig.json" >"$TMP/sig.txt" 2>&1 || fail "report failed"
grep -q 'end early' "$TMP/sig.txt" && fail "a walkable target's report says stacks end early"
assert_alive "$TPID"
ok "truncated walks counted per session, shown in JSON and text, 0 where every frame can be stepped"
