#!/usr/bin/env bash
# mem_breakdown: a process with known memory (150 MiB of heap blocks in use,
# Covers: cli/cmd/status.c, cli/process/proc.c, cli/process/seccomp_gate.c, cli/report/memory_json.c
# 150 MiB freed but kept by glibc because in-use blocks sit between them,
# 64 MiB of direct mmap, all before attach). The one-shot report (JSON and
# text), `status` while attached (text and --format json) and `status` of
# the process once detached each split the RSS: every part within 15% of
# the truth, the parts adding up to RSS (within 5% of VmRSS), glibc named
# with its mallinfo2 figures, the free memory explained in a note.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

start_mem_truth -- --inuse 150 --freed 150 --mmap 64
"$HEAPINJECT" -p "$TPID" --duration 1 --format json -o "$TMP/out.json" 2>"$TMP/cli.err" ||
    fail "heapinject -p: $(cat "$TMP/cli.err")"
check_memory "$TMP/out.json" memory "$(vmrss_bytes "$TPID")" heap_in_use=150 heap_free=150 mmap=64 \
    allocator=glibc readable=true || fail "JSON report: memory breakdown wrong"
python3 - "$TMP/out.json" <<'PY' || fail "JSON report: allocator figures or notes"
import json, sys
m = json.load(open(sys.argv[1]))["memory"]
a = m["allocator"]
assert abs(a["in_use_bytes"] - 150 * 2**20) < 0.1 * 150 * 2**20, a
assert abs(a["free_bytes"] - 150 * 2**20) < 0.1 * 150 * 2**20, a
assert a["arenas"] >= 1 and "libc.so" in a["module"], a
assert any("free memory the allocator keeps" in n and "trim" in n for n in m["notes"]), m["notes"]
PY

# The saved profile keeps it: `report` shows the same breakdown.
"$HEAPINJECT" report "$TMP/out.json" --format json -o "$TMP/again.json" || fail "report of the saved profile"
python3 -c 'import json,sys; a,b=(json.load(open(f))["memory"] for f in sys.argv[1:]); assert a==b, (a,b)' \
    "$TMP/out.json" "$TMP/again.json" || fail "report changed the memory object"
"$HEAPINJECT" report "$TMP/out.json" | grep -q "^Memory: RSS" || fail "report of the saved profile lacks the breakdown"

"$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/out.txt" 2>"$TMP/cli.err" || fail "text report: $(cat "$TMP/cli.err")"
grep -q "^Memory: RSS" "$TMP/out.txt" || fail "text report has no Memory block: $(cat "$TMP/out.txt")"
for w in "heap in use" "heap free" "mmap" "stacks" "files" "other" "allocator: glibc" "mallinfo2: in use" "Note: glibc"; do
    grep -q "$w" "$TMP/out.txt" || fail "text report lacks '$w': $(sed -n '/^Memory/,/^$/p' "$TMP/out.txt")"
done
grep -q "less than about" "$TMP/out.txt" && fail "the 512 KiB hint appeared though allocations were counted"

"$HEAPINJECT" attach -p "$TPID" -q || fail "attach failed"
"$HEAPINJECT" status -p "$TPID" --interval 0.2 >"$TMP/status.txt" || fail "status failed"
grep -q "Memory: RSS" "$TMP/status.txt" && grep -q "allocator: glibc" "$TMP/status.txt" ||
    fail "status text lacks the breakdown: $(cat "$TMP/status.txt")"
"$HEAPINJECT" status -p "$TPID" --interval 0.2 --format json >"$TMP/status.json" || fail "status json failed"
check_memory "$TMP/status.json" memory "$(vmrss_bytes "$TPID")" heap_in_use=150 heap_free=150 mmap=64 \
    allocator=glibc || fail "status --format json: memory breakdown wrong"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"

# Not attached: glibc's heap is still found in the maps, not split.
"$HEAPINJECT" status -p "$TPID" --format json >"$TMP/status2.json"; rc=$?
[ "$rc" -eq 7 ] || fail "status of a detached process: exit $rc, want 7"
python3 - "$TMP/status2.json" <<'PY' || fail "status (not attached): heap not found"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["attached"] is False
p = d["memory"]["parts"]
assert abs(p["heap_unsplit"] - 300 * 2**20) < 0.15 * 300 * 2**20, p
assert abs(p["mmap"] - 64 * 2**20) < 0.15 * 64 * 2**20, p
assert d["memory"]["allocator"]["name"] == "unknown"
PY
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "RSS split within 15% of the truth in the report, status and status --format json"
