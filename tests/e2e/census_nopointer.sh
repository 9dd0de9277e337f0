#!/usr/bin/env bash
# census_nopointer: a block in use that the program holds only as a number
# (its address inverted, as a Python int or an xor-linked list keeps one)
# is unreachable to the census, which cannot tell it from a leak. The
# census used to call such blocks "leaked"; it now says that no pointer
# to them was found and what that may mean. The target checks both of its
# blocks afterwards: the one called unreachable is in use and intact.
. "$(dirname "$0")/lib.sh"
start_target census_hidden
"$HEAPINJECT" census -p "$TPID" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
line=$(grep -E '^ +unreachable +[0-9.k]+ blocks' "$TMP/c.txt") || fail "no unreachable line: $(cat "$TMP/c.txt")"
echo "$line"
# The hidden block (96 KiB) is among the unreachable ones: the scan cannot see it.
echo "$line" | grep -Eq 'blocks +(9[6-9]|[1-9][0-9][0-9])(\.[0-9])? KiB' ||
    fail "the block held as a number is not counted unreachable: $line"
echo "$line" | grep -q 'no pointer to them found from any root' || fail "the line does not say no pointer was found: $line"
echo "$line" | grep -q 'a form no scan sees' || fail "the line does not say what else it may mean: $line"
if echo "$line" | grep -Eq ': leaked\)$'; then fail "the census still calls them leaked: $line"; fi
kill -USR1 "$TPID"
wait_for_line "$TMP/census_hidden.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/census_hidden.out" || fail "the target's data changed: $(cat "$TMP/census_hidden.out")"
assert_alive "$TPID"
ok "a block held only as a number: 'no pointer found' and what it may mean, not 'leaked'"
