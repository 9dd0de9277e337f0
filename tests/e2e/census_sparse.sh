#!/bin/bash
# census_sparse.sh - the census reads only pages that were ever written: a
# 64 GiB MAP_NORESERVE mapping with one page written (it holds the only
# pointer to a block) and a 256 MiB zero-filled .bss array whose last
# element holds another's, and a 512 MiB mapping written whole whose last
# word holds a third's. All three are reachable, the 10 blocks leaked
# are the only unreachable ones, and the census says it skipped 64 GiB
# and more of untouched memory. (Reading every page mapped the zero page
# into the copy page by page: 62 s and 128 MiB of page tables for this
# mapping; a sanitizer's shadow is terabytes.) Before that, `status` (not
# attached) splits the RSS without adding a page table to the process:
# the headers it reads in anonymous memory that was never written are
# zeros, read from the pagemap, not through /proc/PID/mem (which mapped the
# zero page there: VmPTE +8 kB on this process). The dense mapping is read
# one run of written pages at a time: asking the pagemap again at every
# page made that quadratic: 38 s for 128 MiB, 90 s for 256 MiB, and the
# agent stops a census at 120 s, so at 512 MiB the census fails.
. "$(dirname "$0")/lib.sh"

# Strict overcommit accounts even MAP_NORESERVE: no 64 GiB mapping there.
[ "$(cat /proc/sys/vm/overcommit_memory)" != 2 ] || skip "vm.overcommit_memory is 2: a 64 GiB mapping cannot be made"
start_target census_sparse
pte() { awk '/^VmPTE:/{print $2}' "/proc/$TPID/status"; }
before=$(pte)
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.txt" 2>&1
after=$(pte)
[ "$before" = "$after" ] || fail "status changed the process's page tables: VmPTE $before kB -> $after kB"
grep -q "by holder" "$TMP/status.txt" || fail "status: no RSS split: $(cat "$TMP/status.txt")"
ok "status read the memory without touching the process's page tables (VmPTE $before kB)"
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/err" || fail "census: $(cat "$TMP/err")"
python3 - "$TMP/c.json" <<'PY' || fail "census of sparse memory wrong"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
u = c["unreachable"]
assert u["blocks"] == 10, f"unreachable {u}: want the 10 leaked blocks (the two held only from untouched-looking memory must be reachable)"
assert c["root_untouched_bytes"] >= 64 * 2**30, f"root_untouched_bytes {c['root_untouched_bytes']}: the 64 GiB never touched was read"
print("unreachable", u, "untouched GiB", c["root_untouched_bytes"] / 2**30, "scan ms", c.get("scan_ms"))
PY
"$HEAPINJECT" census -q -p "$TPID" -o "$TMP/c.txt" 2>"$TMP/err" || fail "text census: $(cat "$TMP/err")"
grep -q "of anonymous memory was never touched (no page, all zeros) and was skipped" "$TMP/c.txt" ||
    fail "the text census does not say what it skipped: $(grep Notes "$TMP/c.txt")"
assert_alive "$TPID"
ok "sparse memory: only written pages read; both held blocks reachable, 10 leaked"

# A stripped copy: the static global that holds the 3,000-byte block has no
# name left, and is shown at its address within the module, which nm on
# the unstripped file names.
off=$(nm "$TARGETS/census_sparse" | awk '$3 == "s_hidden_holder" {print $1}' | sed 's/^0*//')
[ -n "$off" ] || fail "nm does not find s_hidden_holder in the target"
cp "$TARGETS/census_sparse" "$TMP/sparse_stripped" && strip "$TMP/sparse_stripped" || fail "cannot strip a copy"
"$TMP/sparse_stripped" >"$TMP/stripped.out" 2>&1 &
SP=$!; PIDS+=("$SP")
wait_for_line "$TMP/stripped.out" ready 10 || fail "the stripped copy did not start"
"$HEAPINJECT" census -q -p "$SP" --format json -o "$TMP/s.json" 2>"$TMP/err" || fail "census of the stripped copy: $(cat "$TMP/err")"
name=$(python3 -c 'import json,sys; print([r["name"] for r in json.load(open(sys.argv[1]))["census"]["roots"] if r["retained_bytes"] in (3000, 3008)])' "$TMP/s.json")
[[ "$name" == *"(sparse_stripped+0x$off)"* ]] ||
    fail "the unnamed global is not shown at its module offset 0x$off: $name"
ok "a global with no symbol is shown as sparse_stripped+0x$off, the address nm gives it"
