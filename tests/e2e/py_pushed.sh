#!/usr/bin/env bash
# py_pushed: a snapshot the agent pushes (here at a crash: SIGSEGV from a
# read of address 0 through ctypes) carries Python frames as asked ones do
# (issue 29): the report names last_gasp (app.py:LINE), which kept 64 MiB
# after the cli's first background snapshot and just before the fault.
# Before, pushed snapshots had native frames only. Debian's python3 (3.11)
# and pyenv's 3.13.
. "$(dirname "$0")/lib.sh"

APP="$ROOT/tests/targets/py_pushed/app.py"
LINE=$(grep -n '# gasp line$' "$APP" | cut -d: -f1)
checked=0
run() {
    local py=$1 name=$2
    rm -f "$TMP/go.$name"
    "$py" "$APP" "$TMP/go.$name" >"$TMP/$name.out" 2>"$TMP/$name.terr" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" '^ready' 30 || fail "$name did not get ready: $(cat "$TMP/$name.terr")"
    "$HEAPINJECT" -v -p "$TPID" --duration 60 --format json -o "$TMP/$name.json" 2>"$TMP/$name.err" &
    local cli=$!
    PIDS+=("$cli")
    wait_for_line "$TMP/$name.err" "background snapshot" 30 || fail "$name: no background snapshot: $(cat "$TMP/$name.err")"
    touch "$TMP/go.$name"
    local ts crc
    wait "$TPID"; ts=$?
    wait "$cli"; crc=$?
    [ "$ts" -eq 139 ] || fail "$name: the target's wait status is $ts, want 139 (SIGSEGV)"
    [ "$crc" -eq 3 ] || fail "$name: heapinject exited $crc, want 3: $(grep -v '^inject:' "$TMP/$name.err")"
    grep -q '^gasped 64 ok$' "$TMP/$name.out" || fail "$name: target's check: $(cat "$TMP/$name.out")"
    grep -q "snapshot taken in the signal handler" "$TMP/$name.err" || fail "$name: stderr does not say a snapshot was pushed"
    python3 - "$TMP/$name.json" "$LINE" <<'PY' || fail "$name: JSON: see above"
import os, sys
sys.path.insert(0, os.environ["ROOT"] + "/tests/e2e")
import hi_profile
d, line = hi_profile.load(sys.argv[1]), int(sys.argv[2])
x = d.get("target_exit")
assert x and x.get("snapshot") == "signal" and x["snapshot_signal"] == 11, x
def named(s):
    return any(f.get("runtime") == "python" and f["function"] == "last_gasp" and f["line"] == line and
               os.path.basename(f["file"]) == "app.py" for f in s["frames"])
gasp = sum(s["live_bytes"] for s in d["stacks"] if named(s))
assert gasp >= 48 << 20, "last_gasp (app.py:%d) holds %d bytes in the pushed snapshot, want about 64 MiB" % (line, gasp)
print("pushed at signal 11: last_gasp (app.py:%d) %.1f MiB" % (line, gasp / 2**20))
PY
    ok "$name: the crash snapshot names last_gasp (app.py:$LINE)"
    checked=$((checked + 1))
}
export ROOT
[ -x /usr/bin/python3 ] && run /usr/bin/python3 debian
for py in /root/.pyenv/versions/3.13.*/bin/python3; do [ -x "$py" ] && run "$py" pyenv3.13; done
[ "$checked" -ge 2 ] || fail "fewer than two CPython versions checked ($checked)"
