#!/bin/bash
# cli_attach_timing.sh - HEAPINJECT_TIMING=1 makes `attach` print its phase
# clock readings (the bench's per-phase breakdown: the process's pid, main,
# its attach begun, the cli's checks done, the injector ready, the seize,
# the safe point, dlopen done, the detach, the agent's answer): one line on stderr, on
# CLOCK_MONOTONIC (within the readings taken around the command), in the
# order the attach goes through them; nothing without the variable or with
# another value, and the attach is the same either way.
. "$(dirname "$0")/lib.sh"

mono() { python3 -c 'import time; print(time.monotonic_ns())'; }

start_target inj_wait naps 60
for v in unset 0; do
    if [ "$v" = unset ]; then
        env -u HEAPINJECT_TIMING "$HEAPINJECT" attach -p "$TPID" >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
    else
        HEAPINJECT_TIMING=$v "$HEAPINJECT" attach -p "$TPID" >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
    fi
    grep -q "timing" "$TMP/a.err" && fail "HEAPINJECT_TIMING $v: a timing line anyway: $(cat "$TMP/a.err")"
    grep -q "attached to pid $TPID" "$TMP/a.err" || fail "no attach message: $(cat "$TMP/a.err")"
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1 || fail "detach"
done

before=$(mono)
HEAPINJECT_TIMING=1 "$HEAPINJECT" attach -p "$TPID" >"$TMP/a.out" 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
after=$(mono)
grep -q "attached to pid $TPID" "$TMP/a.err" || fail "no attach message: $(cat "$TMP/a.err")"
line=$(grep "^heapinject: timing (CLOCK_MONOTONIC ns): " "$TMP/a.err")
[ "$(grep -c "timing" "$TMP/a.err")" = 1 ] || fail "not one timing line: $(cat "$TMP/a.err")"
python3 - "$before" "$after" "$line" "$TPID" <<'EOF' || fail "timing line: $line"
import sys
before, after, line = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
ts = dict(kv.split("=") for kv in line.split(":", 2)[2].split())
names = ["main", "begun", "checked", "prepared", "seized", "safe", "loaded", "detached", "connected"]
assert list(ts) == ["pid"] + names, f"fields {list(ts)}"
assert ts["pid"] == sys.argv[4], f"pid {ts['pid']}, not the target's {sys.argv[4]}"
v = [int(ts[n]) for n in names]
assert before < v[0], f"main {v[0]} before the command started ({before})"
assert all(a < b for a, b in zip(v, v[1:])), f"not in attach order: {v}"
assert v[-1] < after, f"connected {v[-1]} after the command ended ({after})"
EOF
"$HEAPINJECT" status -p "$TPID" >/dev/null 2>&1 || fail "status after the timed attach"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1 || fail "detach"
assert_alive "$TPID"
assert_not_traced "$TPID"
grep -q "bad nap" "$TMP/inj_wait.out" && fail "the target's sleep was disturbed: $(grep "bad nap" "$TMP/inj_wait.out")"
ok "HEAPINJECT_TIMING=1: one line of CLOCK_MONOTONIC readings in attach order within the command; none without it"
