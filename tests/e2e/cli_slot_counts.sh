#!/usr/bin/env bash
# cli_slot_counts: status and detach count the same allocator slots and the
# same modules. status used to give the payload's count ("5 allocator
# slots in 2 modules": modules with a hook) and detach every module it read
# ("of 3 modules": ld.so too, which has no allocator slot), two numbers of
# one thing that disagreed. The target's data is checked after.
. "$(dirname "$0")/lib.sh"
start_target census_array
"$HEAPINJECT" attach -p "$TPID" >"$TMP/a.txt" 2>&1 || fail "attach failed: $(cat "$TMP/a.txt")"
"$HEAPINJECT" status -p "$TPID" >"$TMP/s.txt" 2>&1 || fail "status failed: $(cat "$TMP/s.txt")"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/d.txt" 2>&1 || fail "detach failed: $(cat "$TMP/d.txt")"
hooks=$(grep '^  hooks:' "$TMP/s.txt") || fail "status has no hooks line: $(cat "$TMP/s.txt")"
echo "$hooks"; cat "$TMP/d.txt"
s_slots=$(sed -n 's/.* of the \([0-9]*\) allocator slots of \([0-9]*\) modules point into the profiler$/\1/p' <<<"$hooks")
s_mods=$(sed -n 's/.* of the \([0-9]*\) allocator slots of \([0-9]*\) modules point into the profiler$/\2/p' <<<"$hooks")
s_hooked=$(sed -n 's/^  hooks: *\([0-9]*\) of the .*/\1/p' <<<"$hooks")
d_slots=$(sed -n 's/.*(all \([0-9]*\) allocator slots of \([0-9]*\) modules, hooked or not.*/\1/p' "$TMP/d.txt")
d_mods=$(sed -n 's/.*(all \([0-9]*\) allocator slots of \([0-9]*\) modules, hooked or not.*/\2/p' "$TMP/d.txt")
[ -n "$s_slots" ] && [ -n "$d_slots" ] || fail "counts not found: status '$hooks', detach '$(cat "$TMP/d.txt")'"
[ "$s_slots" = "$d_slots" ] && [ "$s_mods" = "$d_mods" ] ||
    fail "status counts $s_slots slots in $s_mods modules, detach $d_slots slots of $d_mods modules"
a_hooked=$(sed -n 's/.*: \([0-9]*\) allocator slots hooked.*/\1/p' "$TMP/a.txt")
[ "$s_hooked" = "$a_hooked" ] || fail "status says $s_hooked hooked, attach said $a_hooked"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_array.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/census_array.out" || fail "the target's data changed"
assert_alive "$TPID"
ok "status and detach: $d_slots allocator slots of $d_mods modules, $s_hooked hooked, one count"
