#!/bin/bash
# census_cost.sh - what a census's copy costs the process, measured and
# Covers: cli/census/cost.c, cli/cmd/census.c, cli/cmd/live.c, cli/cmd/profile.c, payload/serve/agent.c, payload/serve/pressure.c, payload/sys/arena.c
# bounded (issue 25, item 4). A writer that rewrites 64 MiB all the time:
# the census prints the minor faults it took while the copy lived (every
# page written then is copied) beside the stall, in text and JSON, and
# they are many (more than 1 MiB's worth above its usual rate). A process
# whose memory cgroup has less room left than the copy could need at worst
# is refused with the figures (exit 5, nothing attached); --force takes
# the census anyway (an idle process: the copy's real cost is small, so
# nothing is OOM-killed). From the second census of a process on, its
# copy's cost is predicted from the last one's (text, JSON, refusal).
# Every target's data checks out.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cgroup.bash"

# --- the cost of a copy of a writer -------------------------------------------
start_target census_writer 64 write
W=$TPID
"$HEAPINJECT" census -p "$W" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census of the writer: $(cat "$TMP/c.err")"
line=$(grep "the copy's cost:" "$TMP/c.txt") || fail "no cost line: $(head -5 "$TMP/c.txt")"
grep -q "stall .* ms" "$TMP/c.txt" || fail "no stall line"
grep -q "no census of this process before, nothing to predict its copy's cost from" "$TMP/c.err" ||
    fail "the first census predicts something: $(cat "$TMP/c.err")"
# The second census predicts its copy's cost from the first's (issue 25,
# item 4), beside the headroom check and in JSON; the writer rewrites all
# its 64 MiB while any copy lives, so the prediction is near the cost.
faults=$("$HEAPINJECT" census -p "$W" --format json 2>"$TMP/c2.err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
c = d.get("census", d)["copy_cost"]
print(c["minor_faults"], c["copied_bytes_est"], int(c["window_ms"]), c["predicted_bytes"])') || fail "no copy_cost in JSON"
set -- $faults
[ "$1" -gt 256 ] && [ "$2" -gt $((1 << 20)) ] ||
    fail "the writer's copy cost only $1 faults, ~$2 bytes in $3 ms (it rewrites 64 MiB without pause)"
grep -q "the last census's copy cost about [0-9.]* MiB in [0-9.]* s ([0-9]* s ago): about [0-9.]* MiB for this one" \
    "$TMP/c2.err" || fail "the second census predicts nothing: $(cat "$TMP/c2.err")"
[ "$4" != None ] && [ "$4" -gt $(($2 / 4)) ] && [ "$4" -lt $(($2 * 4)) ] ||
    fail "predicted $4 bytes, the copy cost ~$2"
ok "writer: $line; JSON: $1 faults, ~$2 bytes copied in $3 ms, $4 predicted; $(grep -o "the last census's.*" "$TMP/c2.err")"
# The one-shot session's census (heapinject -p PID --census) too.
"$HEAPINJECT" -q -p "$W" --duration 1 --census --format json -o "$TMP/one.json" 2>"$TMP/one.err" ||
    fail "one-shot --census of the writer: $(cat "$TMP/one.err")"
faults=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
c = d["census"]["copy_cost"]
print(c["minor_faults"], c["copied_bytes_est"], int(c["window_ms"]))' "$TMP/one.json") ||
    fail "no copy_cost in the one-shot's JSON: $(grep -o '"copy_cost": [^,]*' "$TMP/one.json")"
set -- $faults
[ "$1" -gt 256 ] && [ "$2" -gt $((1 << 20)) ] ||
    fail "one-shot: the writer's copy cost only $1 faults, ~$2 bytes in $3 ms"
"$HEAPINJECT" -p "$W" --duration 1 --census -o "$TMP/one.txt" 2>"$TMP/one.err" ||
    fail "one-shot --census (text): $(cat "$TMP/one.err")"
grep -q "the copy's cost:" "$TMP/one.txt" || fail "no cost line in the one-shot's text report"
ok "one-shot --census: JSON copy_cost $1 faults, ~$2 bytes in $3 ms; $(grep -o "the copy's cost:.*" "$TMP/one.txt")"
kill -USR1 "$W"
wait_for_line "$TMP/census_writer.out" verify 10 && grep -q "verify ok" "$TMP/census_writer.out" ||
    fail "writer data: $(cat "$TMP/census_writer.out")"
kill "$W"

# --- refused near the cgroup's limit, taken with --force ----------------------
cg_make $((1 << 40))
cg_start_target census_writer 48 idle
I=$TPID
cur=$(cg_current)
# 16 MiB above what it holds: less than 48 MiB rewritten could take
echo $((cur + (16 << 20))) >"$CG_DIR/$CG_MAX_FILE" || fail "cannot lower the limit"
"$HEAPINJECT" census -p "$I" >"$TMP/r.txt" 2>"$TMP/r.err"; rc=$?
[ "$rc" = 5 ] || fail "near the limit: census exit $rc, expected 5: $(cat "$TMP/r.err")"
grep -q "cgroup .*hi-e2e-$$: memory[._a-z]* [0-9.]* MiB, memory[._a-z]* [0-9.]* MiB, [0-9.]* MiB left" "$TMP/r.err" ||
    fail "the refusal does not give the cgroup's figures: $(cat "$TMP/r.err")"
grep -q "an OOM kill inside the process's memory cgroup" "$TMP/r.err" || fail "no reason: $(cat "$TMP/r.err")"
grep -q "nothing was attached (--force takes it anyway)" "$TMP/r.err" || fail "no --force hint: $(cat "$TMP/r.err")"
[ ! -s "$TMP/r.txt" ] || fail "a report was written"
! grep -q libheapinject "/proc/$I/maps" || fail "libheapinject.so was loaded into the refused process"
ok "near its cgroup's limit: exit 5, $(grep -o 'cgroup .* left' "$TMP/r.err")"
"$HEAPINJECT" -p "$I" --duration 1 --census -o "$TMP/p.txt" >"$TMP/p.out" 2>"$TMP/p.err"; rc=$?
[ "$rc" = 5 ] || fail "near the limit: one-shot --census exit $rc, expected 5: $(cat "$TMP/p.err")"
grep -q "cgroup .*hi-e2e-$$: memory[._a-z]* [0-9.]* MiB, memory[._a-z]* [0-9.]* MiB, [0-9.]* MiB left" "$TMP/p.err" &&
    grep -q "nothing was attached (--force takes it anyway)" "$TMP/p.err" &&
    grep -q "no profile either" "$TMP/p.err" || fail "one-shot refusal: $(cat "$TMP/p.err")"
[ ! -s "$TMP/p.txt" ] && [ ! -s "$TMP/p.out" ] || fail "the refused one-shot wrote a report"
! grep -q libheapinject "/proc/$I/maps" || fail "libheapinject.so was loaded by the refused one-shot"
ok "near its cgroup's limit: one-shot --census refused up front, exit 5"
"$HEAPINJECT" -p "$I" --duration 1 --census --force -o "$TMP/pf.txt" 2>"$TMP/pf.err" ||
    fail "one-shot --census --force: $(cat "$TMP/pf.err")"
grep -q -- "--force: taking it anyway" "$TMP/pf.err" || fail "one-shot --force does not say so: $(cat "$TMP/pf.err")"
grep -q "the copy's cost:" "$TMP/pf.txt" || fail "one-shot --force: no census cost: $(head -5 "$TMP/pf.txt")"
ok "one-shot --census --force: taken, with its cost"
"$HEAPINJECT" census --force -p "$I" >"$TMP/f.txt" 2>"$TMP/f.err" || fail "--force: $(cat "$TMP/f.err")"
grep -q -- "--force: taking it anyway" "$TMP/f.err" || fail "--force does not say so: $(cat "$TMP/f.err")"
grep -q "in use .* 48.0 MiB" "$TMP/f.txt" || fail "--force census: $(head -5 "$TMP/f.txt")"
# refused again, the refusal now says what the last copy cost (an idle
# process: little) and what this one would at that rate
"$HEAPINJECT" census -p "$I" >"$TMP/r2.txt" 2>"$TMP/r2.err"; rc=$?
[ "$rc" = 5 ] || fail "near the limit again: census exit $rc, expected 5: $(cat "$TMP/r2.err")"
grep -q "the last census's copy cost about .* for this one. No census was taken" "$TMP/r2.err" ||
    fail "the refusal gives no prediction from the last census: $(cat "$TMP/r2.err")"
ok "refused again, with the prediction: $(grep -o "the last census's copy cost.*for this one" "$TMP/r2.err")"
assert_alive "$I"
kill -USR1 "$I"
wait_for_line "$TMP/census_writer.out" verify 10 && grep -q "verify ok" "$TMP/census_writer.out" ||
    fail "idle target's data: $(cat "$TMP/census_writer.out")"
ok "--force: taken, the process alive and its data intact"
