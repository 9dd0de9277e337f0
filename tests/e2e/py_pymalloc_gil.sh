#!/usr/bin/env bash
# py_pymalloc_gil: the GIL is never waited for without a bound (issue 29
# item 2). Debian's python3 keeps the GIL inside a C call (a sleep called
# through ctypes.PyDLL, which does not let the GIL go) while heapinject
# attaches: the agent answers snapshots meanwhile, gives the install up
# after its bound and says so in one line ("the GIL could not be had"),
# and Python's allocator stays pymalloc (the thread that waited for the GIL
# only lets it go once it has it). Once the script runs again it is fine,
# its checks pass, and a second session, with the GIL free, installs (its
# allocator is None while attached) and restores on detach.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"

TIN="$TMP/py.in"; TOUT="$TMP/py.out"
mkfifo "$TIN"
sleep 100000 >"$TIN" &
PIDS+=("$!")
"$PY" "$ROOT/tests/targets/py_pymalloc.py" <"$TIN" >"$TOUT" 2>"$TMP/py.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TOUT" '^ready' 30 || fail "python did not start: $(cat "$TMP/py.err")"
cmd() { # cmd 'COMMAND' PATTERN: sends, waits for a new matching line, prints it
    local before; before=$(wc -l <"$TOUT")
    echo "$1" >"$TIN"
    for _ in $(seq 1 2400); do
        tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2" && return 0
        alive "$TPID" || fail "python died during '$1': $(tail -3 "$TMP/py.err")"
        sleep 0.05
    done
    fail "no '$2' after '$1'"
}

cmd 'pre 50000' '^pre bytes=' >/dev/null
cmd 'hold 15' '^holding' >/dev/null
"$HEAPINJECT" attach -p "$TPID" --rate 64K --pymalloc >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
grep -q '^held' "$TOUT" && fail "the GIL was let go before the agent's bound: nothing tested (a slow attach?)"
status=""
for _ in $(seq 1 100); do # the bound is 2 s from the agent's start
    "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/s.json" 2>"$TMP/snap.err" ||
        fail "snapshot while the GIL is held: $(cat "$TMP/snap.err")"
    status=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])).get("pymalloc") or {}; print(p.get("status", "none"))' "$TMP/s.json")
    [ "$status" != 0 ] && break
    sleep 0.2
done
grep -q '^held' "$TOUT" && fail "the GIL was let go before the install was given up: nothing tested (a slow machine?)"
# The thread waiting for the GIL names itself (through /proc/TID/comm,
# not its creator's write to /proc/self/task/TID/comm: procmaps.h).
grep -qx heapinject-gil /proc/"$TPID"/task/*/comm ||
    fail "no thread named heapinject-gil while it waits for the GIL: $(cat /proc/"$TPID"/task/*/comm | sort | uniq -c | tr '\n' ' ')"
python3 - "$TMP/s.json" <<'PY' || fail "the install was not given up and said"
import json, sys
p = json.load(open(sys.argv[1]))["pymalloc"]
print("status", p["status"], "why:", p["why"])
assert p["status"] < 0 and p["sampled"] is False, p
assert "GIL could not be had" in p["why"], p["why"]
PY
"$HEAPINJECT" report "$TMP/s.json" -o "$TMP/s.txt" || fail "report"
grep -q 'pymalloc not sampled: the GIL could not be had' "$TMP/s.txt" || fail "the text report does not say why"
wait_for_line "$TOUT" '^held' 60 || fail "the script did not come back from its C call"
[ "$(cmd name '^name=')" = name=pymalloc ] || fail "an install given up replaced the allocator anyway"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach.out" 2>&1 || fail "detach: $(cat "$TMP/detach.out")"
[ "$(cmd name '^name=')" = name=pymalloc ] || fail "the allocator changed at detach"

# A second session, the GIL free: installed and restored.
"$HEAPINJECT" attach -p "$TPID" --rate 64K --pymalloc >"$TMP/attach2.out" 2>&1 || fail "attach 2: $(cat "$TMP/attach2.out")"
name=""
for _ in $(seq 1 200); do
    name=$(cmd name '^name=')
    [ "$name" = name=None ] && break
    sleep 0.1
done
[ "$name" = name=None ] || fail "the second session did not install ($name)"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach2.out" 2>&1 || fail "detach 2: $(cat "$TMP/detach2.out")"
[ "$(cmd name '^name=')" = name=pymalloc ] || fail "the second session's detach did not restore the allocator"
[ "$(cmd check '^checked ok=')" = checked\ ok=1 ] || fail "the script's own checks failed"
assert_alive "$TPID"
ok "GIL held by the program: install given up after its bound and said; a later session installs and restores"
