#!/usr/bin/env bash
# mem_trim: `heapinject trim -p PID` on a program that freed 200 MiB in the
# middle of its heap (held blocks below and above, so free() alone could
# not give it back): RSS drops by most of the 200 MiB, the output says RSS
# before and after and how long the call took, heapinject detaches, and the
# program runs on with every held block intact and can allocate again. A
# second trim, with a profiler already attached, leaves it attached.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

start_mem_truth -- --inuse 16 --freed 200 --mmap 0 --layout middle
before=$(vmrss_bytes "$TPID")
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim.out" 2>"$TMP/trim.err" || fail "trim: $(cat "$TMP/trim.out" "$TMP/trim.err")"
cat "$TMP/trim.out"
after=$(vmrss_bytes "$TPID")
drop=$((before - after))
echo "VmRSS $before -> $after (dropped $drop)"
[ "$drop" -ge $((160 << 20)) ] || fail "RSS dropped by $drop bytes, want most of 200 MiB"
grep -Eq "glibc malloc_trim\(0\) took .*; RSS .* -> .* \(-" "$TMP/trim.out" || fail "trim output lacks RSS before/after and time"
grep -q "detached" "$TMP/trim.out" || fail "trim does not say it detached"
sleep 0.3
assert_alive "$TPID"
assert_not_traced "$TPID"
[ ! -e "/tmp/heapinject-$(id -u)/$TPID.sock" ] || fail "socket left behind"
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 10 || fail "the program did not verify its data"
grep -q "^verify ok 256" "$TMP/mem_truth.out" || fail "data damaged: $(grep verify "$TMP/mem_truth.out")"

# With a profiler attached: used, and left attached.
"$HEAPINJECT" attach -p "$TPID" -q || fail "attach"
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim2.out" 2>&1 || fail "trim while attached: $(cat "$TMP/trim2.out")"
grep -q "detached" "$TMP/trim2.out" && fail "trim detached a profiler it did not attach"
"$HEAPINJECT" status -p "$TPID" --interval 0.1 >/dev/null || fail "the profiler is gone after trim"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach"
assert_alive "$TPID"
ok "trim gave back $((drop >> 20)) MiB of 200, data intact, detached"
