#!/bin/bash
# profile_budget.sh - the profiler's memory under a cgroup limit (issue 25,
# item 7). A process holding 96 MiB under a 120 MiB limit, allocating from
# 65,536 distinct stacks, profiled at --rate 1 (every allocation sampled):
# the profiler's tables grow only by a share of the room left (its
# budget), so the process is not OOM-killed (before: killed after 0.4 s at
# --rate 1); the samples beyond the budget are dropped and the report says
# why, in text and JSON. The process's own data checks out after.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.bash"

cg_make $((120 << 20))
cg_start_target budget_stacks 96
P=$TPID
"$HEAPINJECT" -p "$P" --rate 1 --duration 4 --format json -o "$TMP/p.json" 2>"$TMP/p.err"; rc=$?
alive "$P" || fail "the process died under the profiler (rc $rc; OOM kill?): $(tail -3 "$TMP/p.err"); \
$(grep -h oom_kill "$CG_DIR/memory.oom_control" "$CG_DIR/memory.events" 2>/dev/null)"
[ "$rc" = 0 ] || fail "profile exit $rc: $(tail -5 "$TMP/p.err")"
read -r budget at_budget dropped stacks < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = d["stack_walks"]; t = d["totals"]
print(w["budget_bytes"], w["budget_dropped"], t["dropped_samples"], t["stacks"])' "$TMP/p.json") ||
    fail "no budget in the JSON profile"
[ "$budget" -gt 0 ] && [ "$budget" -lt $((24 << 20)) ] || fail "budget $budget bytes: expected a share of the ~20 MiB left"
[ "$at_budget" -gt 0 ] && [ "$dropped" -ge "$at_budget" ] ||
    fail "no samples dropped at the budget ($at_budget of $dropped dropped, $stacks stacks)"
[ "$stacks" -lt 65536 ] || fail "$stacks stacks kept: the budget did not hold the table"
"$HEAPINJECT" report "$TMP/p.json" >"$TMP/p.txt" 2>"$TMP/r.err" || fail "report: $(cat "$TMP/r.err")"
grep -q "of them at the profiler's memory budget, [0-9.]* [KM]iB" "$TMP/p.txt" ||
    fail "the report does not say why samples were dropped: $(grep -i drop "$TMP/p.txt")"
kill -USR1 "$P"
wait_for_line "$TMP/budget_stacks.out" verify 20 && grep -q "verify ok" "$TMP/budget_stacks.out" ||
    fail "the process's data: $(cat "$TMP/budget_stacks.out")"
ok "96 MiB under 120 MiB, 65,536 stacks, --rate 1: alive, $stacks stacks kept, $at_budget of $dropped samples dropped at the $budget-byte budget, data intact"
