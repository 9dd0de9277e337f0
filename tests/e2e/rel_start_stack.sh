#!/usr/bin/env bash
# rel_start_stack: the thread that runs heapinject_start (payload/serve/
# start.c) leaves no stack behind. Made with glibc's default stack, it
# stayed after detach in glibc's cache of dead threads' stacks: 8 MiB of
# address space with a guard page, its words pointers to the program's
# blocks, which a later census took for a root ("anonymous mapping ...
# (stacks of running threads ...)" sharing g_rows's blocks: census_array_root
# and cli_report_census failed on it now and then). Three one-shot sessions
# on a single-threaded target: afterwards it has at most one guard page
# (PROT_NONE anonymous mapping) more than before, the agent's cached stack,
# and a census credits every block of g_rows to g_rows.
. "$(dirname "$0")/lib.sh"
guards() { awk '$2 == "---p" && $5 == 0' "/proc/$1/maps" | wc -l; }

start_target census_array
g0=$(guards "$TPID")
for i in 1 2 3; do
    "$HEAPINJECT" -p "$TPID" --duration 0.1 -q -o "$TMP/p$i.json" --format json 2>"$TMP/p.err" ||
        fail "session $i failed: $(cat "$TMP/p.err")"
done
g1=$(guards "$TPID")
[ "$g1" -le $((g0 + 1)) ] || fail "after 3 sessions the target has $g1 guard pages, $g0 before: a thread stack of ours stayed ($(awk '$2 == "---p" && $5 == 0' "/proc/$TPID/maps" | tr '\n' ' '))"
"$HEAPINJECT" census -p "$TPID" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
grep -Eq '^ +5\.0[0-9]? MiB +10 blocks +g_rows \(census_array\)' "$TMP/c.txt" ||
    fail "g_rows does not hold its 10 blocks alone: $(sed -n '/^Roots/,/^$/p' "$TMP/c.txt")"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_array.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/census_array.out" || fail "the target's data changed: $(cat "$TMP/census_array.out")"
assert_alive "$TPID"
ok "no stack of ours after 3 sessions ($g0 guard pages before, $g1 after); g_rows holds its 10 blocks"
