#!/usr/bin/env bash
# census_array_root: a global array of 10 pointers (g_rows, each to a
# 512 KiB block) is one root: one row with the ten blocks summed, not ten
# rows of one name (a census of a real service listed `g_big` ten times,
# 8 MiB each). A scalar global next to it keeps its own row. Text and JSON.
. "$(dirname "$0")/lib.sh"
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }
start_target census_array
"$HEAPINJECT" census -p "$TPID" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
sed -n '/^Roots/,/^$/p' "$TMP/c.txt"
rows=$(grep -c 'g_rows (census_array)' "$TMP/c.txt")
[ "$rows" = 1 ] || fail "g_rows has $rows root rows, wanted one: $(grep 'g_rows' "$TMP/c.txt")"
grep -Eq '^ +5\.0[0-9]? MiB +10 blocks +g_rows \(census_array\), 10 pointers in it$' "$TMP/c.txt" ||
    fail "g_rows's row does not hold its 10 blocks of 512 KiB: $(grep 'g_rows' "$TMP/c.txt")"
grep -Eq '^ +64\.[0-9] KiB +1 block +g_single \(census_array\)$' "$TMP/c.txt" ||
    fail "g_single lost its own row: $(sed -n '/^Roots/,/^$/p' "$TMP/c.txt")"
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/j.err" || fail "census --format json failed: $(cat "$TMP/j.err")"
[ "$(jq_ "$TMP/c.json" "[(r['retained_blocks'], r['retained_bytes'] >= 10 * 512 * 1024) for r in d['roots'] if r['name'].startswith('g_rows ')]")" = "[(10, True)]" ] ||
    fail "JSON: g_rows is not one root of 10 blocks: $(jq_ "$TMP/c.json" "[r for r in d['roots'] if 'g_rows' in r['name']]")"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_array.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/census_array.out" || fail "the target's data changed: $(cat "$TMP/census_array.out")"
assert_alive "$TPID"
ok "an array global is one root row, its elements summed (text and JSON)"
