#!/usr/bin/env bash
# mem_fork_tables: a fork child of a profiled process inherits heapinject's
# tables (the payload's own anonymous mappings), and `status -p CHILD`
# counted them as the program's mmap. They are now found from outside (the
# payload's list of its mappings, read through its symbols) and counted
# under other with a note, in the child and in the parent alike. The child
# runs on; its allocations still work (pl_fork checks them).
. "$(dirname "$0")/lib.sh"
mkfifo "$TMP/in"
exec 3<>"$TMP/in"
"$TARGETS/pl_fork" <"$TMP/in" >"$TMP/out" 2>"$TMP/err" &
TPID=$!; PIDS+=("$TPID")
"$HEAPINJECT" attach -p "$TPID" --rate 1 -q || fail "attach failed: $(cat "$TMP/err")"
echo "fork 3" >&3
wait_for_line "$TMP/out" '^done fork' 60 || fail "the forks did not finish: $(cat "$TMP/out")"
grep -q '^done fork ok=3' "$TMP/out" || fail "children failed: $(grep -E 'done|child' "$TMP/out" | head -3)"
echo keep >&3
wait_for_line "$TMP/out" '^kept child' 30 || fail "no kept child"
KID=$(awk '/^kept child/{print $3}' "$TMP/out")
PIDS+=("$KID")
"$HEAPINJECT" status -p "$KID" >"$TMP/child.txt" 2>&1
"$HEAPINJECT" status -p "$TPID" >"$TMP/parent.txt" 2>&1 || fail "status of the parent failed"
sed -n '/Memory:/,$p' "$TMP/child.txt"
note=$(grep -E "Note: [0-9.]+ [KM]iB resident are heapinject's tables inherited from a parent" "$TMP/child.txt") ||
    fail "the child's status does not tell heapinject's inherited tables: $(sed -n '/Memory:/,$p' "$TMP/child.txt")"
kib=$(sed -E 's/.*Note: ([0-9.]+) ([KM])iB.*/\1 \2/' <<<"$note" | awk '{print ($2 == "M") ? $1 * 1024 : $1}')
awk -v k="$kib" 'BEGIN { exit !(k >= 64) }' || fail "only $kib KiB of tables found: $note"
mmap=$(awk '$1 == "mmap" {print $2, $3}' "$TMP/child.txt")
case "$mmap" in
    "0 B" | [0-9]*" KiB") awk -v m="${mmap% *}" -v u="${mmap#* }" 'BEGIN { exit !(u == "B" || m < 64) }' ||
        fail "the child's mmap still holds the tables: $mmap" ;;
    *) fail "the child's mmap still holds the tables: $mmap" ;;
esac
grep -q "resident are heapinject's own tables: counted under other" "$TMP/parent.txt" ||
    fail "the parent's status does not tell its tables apart: $(sed -n '/Memory:/,/threads:/p' "$TMP/parent.txt")"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
alive "$KID" || fail "the kept child died"
assert_alive "$TPID"
ok "fork child: $kib KiB of inherited heapinject tables counted under other with a note, not as its mmap"
