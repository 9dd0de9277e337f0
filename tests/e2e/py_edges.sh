#!/usr/bin/env bash
# py_edges: the edges of Python frames (issue 29 item 5).
# - deep: 400 bytearrays of 64 KiB kept from a function 500 calls deep
#   (past the 128 frames a stack keeps). The stack holding them keeps its
#   innermost frames (deep_alloc at its line, then deep_alloc's recursion)
#   and ends in the cut mark; the report's Python line says how many stacks
#   were cut. Before, the whole chain was dropped: native frames only.
# - subinterp (3.12, 3.13): the bytearrays are kept by sub_alloc, which a
#   sub-interpreter runs while the main interpreter's run_sub waits in
#   run_string. Their stack has native frames only (never run_sub's line,
#   the main interpreter's stale chain, where sub_alloc runs) and the report
#   says why, in text and JSON. Before, run_sub was spliced in: a wrong frame.
# - After detach the table of code objects is no longer mapped (read from
#   the payload's pl_py_codes through /proc/PID/mem while attached).
# The target checks its data after detach.
# Free-threaded builds (3.13t) are refused by name (python.c); none is
# installed on the test machines, so none is run here.
. "$(dirname "$0")/lib.sh"

APP="$ROOT/tests/targets/py_edges/app.py"
. "$ROOT/tests/e2e/py_codes_lib.bash"

checked=0
# PY_EDGES_ONLY=NAME runs that run alone (to show each part failing on older code).
run() {
    local py=$1 mode=$2 name=$3
    [ -z "${PY_EDGES_ONLY:-}" ] || [ "$PY_EDGES_ONLY" = "$name" ] || return 0
    rm -f "$TMP/go.$name" "$TMP/stop.$name"
    "$py" "$APP" "$mode" "$TMP/go.$name" "$TMP/stop.$name" >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" '^ready' 30 || fail "$name did not get ready: $(cat "$TMP/$name.err")"
    "$HEAPINJECT" attach -p "$TPID" --rate 65536 >/dev/null 2>"$TMP/$name.aerr" || fail "$name: attach: $(cat "$TMP/$name.aerr")"
    touch "$TMP/go.$name"
    wait_for_line "$TMP/$name.out" '^done' 60 || fail "$name did not allocate: $(cat "$TMP/$name.err")"
    "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/$name.json" 2>"$TMP/$name.serr" ||
        fail "$name: snapshot: $(cat "$TMP/$name.serr")"
    "$HEAPINJECT" snapshot -p "$TPID" -o "$TMP/$name.txt" 2>"$TMP/$name.serr" ||
        fail "$name: snapshot: $(cat "$TMP/$name.serr")"
    local table; table=$(codes_table "$TPID") || fail "$name: cannot read pl_py_codes"
    [ "$table" != 0 ] && mapped "$TPID" "$table" || fail "$name: the code table ($table) is not mapped while attached"
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/$name.derr" || fail "$name: detach: $(cat "$TMP/$name.derr")"
    local left=""
    mapped "$TPID" "$table" && left=$(python3 -c 'import sys; a = int(sys.argv[1], 16); print(" ".join(l.split()[0] for l in open(sys.argv[2]) if int(l.split("-")[0], 16) <= a < int(l.split()[0].split("-")[1], 16)))' "$table" "/proc/$TPID/maps")
    touch "$TMP/stop.$name"
    wait "$TPID" || fail "$name: target exited $?: $(tail -3 "$TMP/$name.err")"
    grep -q '^checked 400 ok$' "$TMP/$name.out" || fail "$name: target's check: $(cat "$TMP/$name.out")"
    python3 - "$TMP/$name.json" "$mode" "$APP" >"$TMP/$name.check" 2>&1 <<'PY' || fail "$name: JSON: $(cat "$TMP/$name.check")"
import os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/e2e")
import hi_profile
d, mode, app = hi_profile.load(sys.argv[1]), sys.argv[2], sys.argv[3]
src = open(app).read().splitlines()
line = {k: 1 + next(i for i, l in enumerate(src) if l.endswith("# " + k)) for k in ("deep line", "main-interpreter line")}
top = max(d["stacks"], key=lambda s: s["live_bytes"])
py = [f for f in top["frames"] if f.get("runtime") == "python"]
names = ["%s:%s" % (f["function"], f.get("line")) for f in py]
st = d["python"]
assert top["live_bytes"] > 0.8 * 400 * 65536, "top stack holds %d bytes" % top["live_bytes"]
if mode == "deep":
    assert py, "no Python frames on the deep stack"
    assert py[0]["function"] == "deep_alloc" and py[0]["line"] == line["deep line"], names[:3]
    assert py[-1]["function"].startswith("[stack cut at 128 frames"), "last Python frame %r" % names[-1]
    assert all(f["function"] == "deep_alloc" for f in py[:-1]), names
    assert top["frames"][-1] is py[-1], "the cut mark is not the stack's last frame"
    assert len(py) >= 16, "%d Python frames kept" % len(py)  # 3.8: three native frames a call
    assert st["samples_cut"] > 0, st
    print("deep: %d frames, %d Python (%s ... %s), %d stacks cut" % (len(top["frames"]), len(py), names[0], names[-1], st["samples_cut"]))
else:
    # Either the sub-interpreter's own frames (3.12+: the thread's state is
    # the one it runs) or none, said; never the main interpreter's run_sub
    # where sub_alloc runs.
    assert not any(f["function"] == "run_sub" for f in py), "the main interpreter's stale frames: %s" % names
    if py:
        assert py[0]["function"] == "sub_alloc" and py[0]["line"] == 5 and py[0]["file"] == "<string>", names
        print("subinterp: the sub-interpreter's own frames: %s" % names)
    else:
        assert st["samples_subinterpreter"] > 0, st
        print("subinterp: %d native frames, no Python frame, %d samples in a sub-interpreter" % (len(top["frames"]), st["samples_subinterpreter"]))
PY
    cat "$TMP/$name.check"
    if [ "$mode" = deep ]; then
        grep -q "stacks deeper than 128 frames cut" "$TMP/$name.txt" || fail "$name: the text report does not say stacks were cut: $(grep Python "$TMP/$name.txt")"
    elif grep -q "no Python frame" "$TMP/$name.check"; then
        grep -q "in a sub-interpreter (its frames are not read)" "$TMP/$name.txt" || fail "$name: the text report does not say why: $(grep Python "$TMP/$name.txt")"
    fi
    [ -z "$left" ] || fail "$name: the code table at $table is still mapped after detach ($left)"
    ok "$name: $mode as said; code table unmapped at detach; target's data intact"
    checked=$((checked + 1))
}

export ROOT
[ -x /usr/bin/python3 ] && run /usr/bin/python3 deep debian-deep && run /usr/bin/python3 subinterp debian-subinterp
for py in /root/.pyenv/versions/3.8.*/bin/python3; do [ -x "$py" ] && run "$py" deep pyenv3.8-deep; done
for v in 3.12 3.13; do
    for py in /root/.pyenv/versions/$v.*/bin/python3; do
        [ -x "$py" ] || continue
        run "$py" deep "pyenv$v-deep"
        run "$py" subinterp "pyenv$v-subinterp"
    done
done
[ -n "${PY_EDGES_ONLY:-}" ] || [ "$checked" -ge 5 ] || fail "fewer than five runs ($checked)"
