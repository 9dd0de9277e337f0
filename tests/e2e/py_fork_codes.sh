#!/usr/bin/env bash
# py_fork_codes: a worker forked (os.fork) while its Python parent is
# attached, without following forks, keeps no mapping of ours: the table
# of code objects that names Python frames (read from the payload's
# pl_py_codes through /proc/PID/mem) is unmapped in the child at once, as
# the other tables are released there (issue 29: "the codes table stays
# mapped"), and the parent still reads frames with it. Before, every worker
# carried the parent's table mapping for its whole life, after detach too.
# Both processes check their kept data; the parent's snapshot still names
# keep_blocks.
# Covers: payload/python/sample.c, payload/serve/start.c
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"
APP="$ROOT/tests/targets/py_fork_codes/app.py"
. "$ROOT/tests/e2e/py_codes_lib.bash"

"$PY" "$APP" "$TMP/go" "$TMP/fork" "$TMP/stop" >"$TMP/app.out" 2>"$TMP/app.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/app.out" '^ready' 30 || fail "the target did not start: $(cat "$TMP/app.err")"
"$HEAPINJECT" attach -p "$TPID" --rate 65536 >/dev/null 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
touch "$TMP/go"
wait_for_line "$TMP/app.out" '^kept' 60 || fail "the target did not allocate: $(cat "$TMP/app.err")"
table=$(codes_table "$TPID") || fail "cannot read pl_py_codes"
[ "$table" != 0 ] && mapped "$TPID" "$table" || fail "the code table ($table) is not mapped while attached"
touch "$TMP/fork"
wait_for_line "$TMP/app.out" '^child [0-9]' 30 || fail "no child: $(cat "$TMP/app.err")"
CPID=$(awk '/^child [0-9]/ { print $2 }' "$TMP/app.out")
PIDS+=("$CPID")
child_table=$(codes_table "$CPID") || fail "cannot read the child's pl_py_codes"
if mapped "$CPID" "$table"; then
    fail "the child $CPID still maps the parent's code table at $table (its pl_py_codes: $child_table)"
fi
[ "$child_table" = 0 ] || fail "the child's pl_py_codes still points at $child_table"
mapped "$TPID" "$table" || fail "the parent lost its code table at $table"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/snap.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
ROOT="$ROOT" python3 - "$TMP/snap.json" <<'PY' || fail "the parent's snapshot: see above"
import os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/e2e")
import hi_profile
d = hi_profile.load(sys.argv[1])
top = max(d["stacks"], key=lambda s: s["live_bytes"])
py = [f["function"] for f in top["frames"] if f.get("runtime") == "python"]
assert py and py[0] == "keep_blocks", "top stack's Python frames: %s" % py
print("parent's top stack: %s" % " <- ".join(py[:3]))
PY
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/detach.err" || fail "detach: $(cat "$TMP/detach.err")"
touch "$TMP/stop"
wait "$TPID" || fail "the target exited $?: $(tail -3 "$TMP/app.err")"
grep -q '^child status 0$' "$TMP/app.out" || fail "the child's check: $(cat "$TMP/app.out")"
grep -q '^checked 200 ok$' "$TMP/app.out" || fail "the parent's check: $(cat "$TMP/app.out")"
ok "the forked worker maps no code table of ours; the parent keeps its own and names keep_blocks; both checks pass"
