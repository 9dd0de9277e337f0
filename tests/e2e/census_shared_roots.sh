#!/usr/bin/env bash
# census_shared_roots: 100 buffers of 8 KiB that a runtime-like heap (an
# anonymous mapping) and a global (g_descriptor, through a descriptor
# block) both reach. Credited by first reach, the global marked first got
# all 800 KiB, as node's 119 MiB of Buffers went to an unrelated
# CallDescriptors global. Now a root is credited with the blocks only it
# reaches and the buffers are on one 'shared' line; the list only
# g_own_list reaches stays its own. Text and JSON; the target checks its
# data after.
. "$(dirname "$0")/lib.sh"
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }
start_target census_shared
"$HEAPINJECT" census -p "$TPID" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
sed -n '/^Roots/,/^$/p' "$TMP/c.txt"
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/j.err" || fail "census --format json failed"
desc=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['name'].startswith('g_descriptor '))")
shared=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['kind'] == 'shared' and 'g_descriptor' in r['name'])")
own=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['name'].startswith('g_own_list '))")
echo "g_descriptor $desc B, shared $shared B, g_own_list $own B"
[ "$desc" -lt 4096 ] || fail "g_descriptor is credited with $desc bytes of buffers the mapping reaches too"
[ "$shared" -ge $((100 * 8192)) ] || fail "the shared buffers are not on the shared record ($shared bytes)"
[ "$own" -ge $((200 * 1000)) ] && [ "$own" -lt $((200 * 1100)) ] || fail "g_own_list does not keep its own list ($own bytes)"
grep -Eq '^ +[0-9.]+ KiB +[0-9]+ blocks +shared: reachable from g_descriptor \(census_shared\) and from anonymous mapping' "$TMP/c.txt" ||
    fail "no shared line naming the two roots that share the buffers"
grep -q 'each credited with the blocks only it reaches' "$TMP/c.txt" || fail "the text does not say the crediting rule"
if grep -Eq '^ +0 B +0 blocks' "$TMP/c.txt"; then fail "roots left with nothing of their own are listed at 0 B"; fi
kill -USR1 "$TPID"
wait_for_line "$TMP/census_shared.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/census_shared.out" || fail "the target's data changed"
assert_alive "$TPID"
ok "buffers two roots reach are shared, not the first global's; a list one root reaches is its own"
