#!/bin/bash
# census_exec.sh - a process that execs while its census runs (issue 25,
# item 9a): the census ends with exit 3 (README: the process exec'd) and
# says the process exec'd a new program. Before: exit 1, "detach was not
# confirmed (not connected to the agent)" and "census failed: not
# connected to the agent". The target checks its blocks before the exec;
# the new program checks its own data after it and runs on.
. "$(dirname "$0")/lib.sh"

start_target census_exec 2000000
P=$TPID
"$HEAPINJECT" census -p "$P" >"$TMP/c.txt" 2>"$TMP/c.err" &
C=$!; PIDS+=("$C")
wait_for_line "$TMP/c.err" "forking a copy" 60 || fail "the census did not start: $(cat "$TMP/c.err")"
kill -USR1 "$P"
for ((i = 0; i < 600; i++)); do kill -0 "$C" 2>/dev/null || break; sleep 0.1; done
kill -0 "$C" 2>/dev/null && fail "the census still runs 60 s after the exec: $(cat "$TMP/c.err")"
wait "$C"; rc=$?
cat "$TMP/c.err"
wait_for_line "$TMP/census_exec.out" "^after exec" 10 || fail "the new program did not start: $(cat "$TMP/census_exec.err")"
grep -q "^before exec ok (2000000 blocks, 0 bad)" "$TMP/census_exec.out" || fail "data damaged before the exec: $(cat "$TMP/census_exec.out")"
grep -q "^after exec ok" "$TMP/census_exec.out" || fail "the new program's data: $(cat "$TMP/census_exec.out")"
if [ "$rc" = 0 ]; then
    # the census's answer came before the exec landed: nothing to judge
    skip "the census ended before the exec"
fi
[ "$rc" = 3 ] || fail "exec during the census: exit $rc, expected 3"
grep -q "no census: pid $P exec'd a new program" "$TMP/c.err" || fail "no word of the exec"
grep -q "census failed\|not confirmed" "$TMP/c.err" && fail "a misleading message"
assert_alive "$P"
ok "exec during a census: exit 3, 'exec'd a new program', the new program runs with its data"
