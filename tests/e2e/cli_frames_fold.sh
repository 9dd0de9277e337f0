#!/usr/bin/env bash
# cli_frames_fold: a C++ program built with -O2 leaks through std::map::insert
# from add_entry(). The allocation sits under seven inlined STL frames: the
# text report folds them into the map call and shows add_entry in the stack
# (before, it hid in "(6 more frames)"), and JSON keeps every frame.
. "$(dirname "$0")/lib.sh"

start_target cli_stl_map
"$HEAPINJECT" -p "$TPID" --duration 2 -q --rate 16K >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed: $(cat "$TMP/err.txt")"
cat "$TMP/report.txt"
# The stack of the map's nodes: the one holding _Rb_tree frames in JSON
# terms, in text the one whose folded line names std::map.
awk '/^#[0-9]+ /{blk=""} {blk=blk $0 "\n"} /^ *std::map<.*folded\)$/{found=1} /^$/{if (found) {printf "%s", blk; exit} blk=""}' \
    "$TMP/report.txt" >"$TMP/map_stack.txt"
[ -s "$TMP/map_stack.txt" ] || fail "no stack with std::map's inlined frames folded into one line"
grep -qE '\(inlined; [0-9]+ library frames inlined in it folded\)' "$TMP/map_stack.txt" ||
    fail "the folded line does not say how many frames it folds"
grep -qE '^ *add_entry\(unsigned long\) +cli_stl_map\.cc:[0-9]+$' "$TMP/map_stack.txt" ||
    fail "add_entry is not among the frames shown for the map's stack"
grep -q '_Rb_tree' "$TMP/map_stack.txt" && fail "inlined _Rb_tree frames are still listed one by one"

# JSON is not folded: every inlined frame is there.
"$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 16K --format json -o "$TMP/p.json" 2>"$TMP/err.txt" ||
    fail "heapinject --format json failed: $(cat "$TMP/err.txt")"
python3 - "$TMP/p.json" <<'PY' || fail "JSON lost the inlined STL frames"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
for s in d["stacks"]:
    names = [f["function"] or "" for f in s["frames"]]
    if any(n.startswith("add_entry") for n in names) and sum("_Rb_tree" in n for n in names) >= 3:
        sys.exit(0)
sys.exit(1)
PY
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "inlined STL frames folded; add_entry shown"
