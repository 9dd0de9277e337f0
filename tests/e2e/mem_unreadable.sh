#!/usr/bin/env bash
# mem_unreadable: a process whose malloc is an allocator heapinject cannot
# read (glibc's libc_malloc_debug.so preloaded: its own malloc, none of the
# statistics calls): the report says the figures could not be read and
# why, the anonymous memory is shown as "unplaced" rather than guessed,
# `trim` says there is no such call, exits 5 and leaves the process alone;
# the program's data stays intact.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

DBG=/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0
[ -e "$DBG" ] || skip "no $DBG (glibc older than 2.34)"
start_mem_truth "LD_PRELOAD=$DBG" -- --inuse 20 --freed 20 --mmap 8
"$HEAPINJECT" -p "$TPID" --duration 1 --format json -o "$TMP/out.json" 2>"$TMP/cli.err" || fail "heapinject -p: $(cat "$TMP/cli.err")"
check_memory "$TMP/out.json" memory "$(vmrss_bytes "$TPID")" allocator=unknown readable=false || fail "breakdown"
python3 - "$TMP/out.json" <<'PY' || fail "unreadable allocator not explained"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
assert "libc_malloc_debug" in m["allocator"]["module"], m["allocator"]
assert m["allocator"]["why"], m["allocator"]
assert m["parts"]["unplaced"] > 40 * 2**20, m["parts"]
assert m["parts"]["heap_in_use"] == 0 and m["parts"]["heap_free"] == 0, m["parts"]
assert any("could not be read" in n for n in m["notes"]), m["notes"]
PY
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim.out" 2>&1; rc=$?
cat "$TMP/trim.out"
[ "$rc" -eq 5 ] || fail "trim of an allocator without a trim call: exit $rc, want 5"
grep -q "no call that returns free memory; nothing was done" "$TMP/trim.out" || fail "trim message unclear"
sleep 0.3
assert_alive "$TPID"
assert_not_traced "$TPID"
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 10 || fail "the program did not verify its data"
grep -q "^verify ok" "$TMP/mem_truth.out" || fail "data damaged"
ok "unreadable allocator said so, unplaced shown, trim refused, no harm"
