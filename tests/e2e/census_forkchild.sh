#!/bin/bash
# census_forkchild.sh - `heapinject census` of a fork child whose heap grew
# after the fork (tests/targets/census_forkgrow.c): [heap] is two mappings
# in its maps; the census walks both as one heap and finds exactly the
# blocks the child allocated (30,000 held, 20,000 dropped); the child's
# data is intact after. Then, where PostgreSQL is installed, the census of
# one of its backends (cli_postgres.sh's cluster setup).
. "$(dirname "$0")/lib.sh"

jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }

start_target census_forkgrow
CPID=$(sed -n 's/^child \([0-9]*\) .*/\1/p' "$TMP/census_forkgrow.out")
[ -n "$CPID" ] || fail "no child pid from census_forkgrow"
PIDS+=("$CPID")
heaps=$(grep -c '\[heap\]' "/proc/$CPID/maps")
echo "the child's maps show [heap] as $heaps mapping(s):"
grep -B0 -A1 '\[heap\]' "/proc/$CPID/maps"
"$HEAPINJECT" census -p "$CPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census of the fork child failed: $(cat "$TMP/c.err")"
group() { # group SIZE KEY: the by-size group's count
    jq_ "$TMP/c.json" "{s['size']: s for s in d['sizes']}.get($1, {}).get('$2', 0)"
}
held=$(group 424 blocks) lost=$(group 760 blocks) lost_unr=$(group 760 unreachable_blocks) held_unr=$(group 424 unreachable_blocks)
echo "blocks of 424: $held ($held_unr unreachable); of 760: $lost ($lost_unr unreachable)"
[ "$held" = 30000 ] || fail "the census found $held blocks of 424 bytes, the child holds 30000"
[ "$held_unr" = 0 ] || fail "$held_unr held blocks of 424 bytes called unreachable"
[ "$lost" = 20000 ] && [ "$lost_unr" = 20000 ] || fail "the child dropped 20000 blocks of 760 bytes; census: $lost ($lost_unr unreachable)"
kids=$(ps -o pid= --ppid "$CPID")
[ -z "$kids" ] || fail "the census left a child of $CPID: $kids"
assert_not_traced "$CPID"
kill -USR1 "$CPID"
wait_for_line "$TMP/census_forkgrow.out" "verify" 20 || fail "the child did not verify"
grep -q "verify ok" "$TMP/census_forkgrow.out" || fail "the child's data damaged"
assert_alive "$TPID"
ok "census of a fork child whose [heap] grew after the fork: exact block counts, data intact"
