#!/usr/bin/env bash
# format_massif: `--format massif` read by valgrind's ms_print: the graph,
# one peak, and leak_steady as the largest branch of the detailed tree.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader ms_print valgrind
start_leaky
snapshot "$TMP/massif.out" --rate 64K --format massif

head -3 "$TMP/massif.out" | grep -q '^time_unit: ms$' || fail "no massif header: $(head -3 "$TMP/massif.out")"
[ "$(grep -c '^heap_tree=peak$' "$TMP/massif.out")" -eq 1 ] || fail "not exactly one peak snapshot"
ms_print --threshold=0 "$TMP/massif.out" >"$TMP/ms.txt" 2>"$TMP/ms.err" || fail "ms_print failed: $(cat "$TMP/ms.err")"
cat "$TMP/ms.txt"
grep -q '^Command: *pid '"$TPID"'\|^Command: .*cli_leaky' "$TMP/ms.txt" || fail "ms_print shows no command"
grep -q '^ Detailed snapshots: \[.*(peak)' "$TMP/ms.txt" || fail "ms_print found no peak snapshot"
# The first branch under "(heap allocation functions)" of the last tree.
branch=$(awk '/\(heap allocation functions\)/ {getline; line = $0} END {print line}' "$TMP/ms.txt")
fn=$(sed -n 's/^->[0-9.]*% ([0-9,]*B) 0x[0-9A-F]*: \([^ ]*\).*/\1/p' <<<"$branch")
[ "$fn" = "$LEAK_FN" ] || fail "largest branch is '$branch', want $LEAK_FN"
ok "ms_print: largest branch is $fn"
