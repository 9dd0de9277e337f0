#!/bin/bash
# census_threads_all.sh - a census of a process with 5,000 threads, more
# than a census used to hold (4,096: the others ran on, their registers
# unread, issue 25). Every thread is held now (up to 32,768), its
# registers read and merged by bisection (a search of all for each was
# N x N compares while the threads are held); the stall is printed.
# The target checks its blocks and that every thread still waits.
# Schedule: alone (5,000 threads held under a 2 s bound)
. "$(dirname "$0")/lib.sh"

N=5000
start_target census_threads $N
P=$TPID
t0=$(date +%s%N)
"$HEAPINJECT" census -p "$P" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census: exit $?: $(cat "$TMP/c.err")"
ms=$((($(date +%s%N) - t0) / 1000000))
read -r threads regs held_ms fork_ms < <(python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["census"]
print(c["threads"], c["threads_with_registers"], c["threads_held_ms"], c["fork_ms"])' "$TMP/c.json")
echo "threads $threads, with registers $regs, stall ${held_ms} ms (fork ${fork_ms} ms), census ${ms} ms"
[ "$threads" = $((N + 1)) ] || fail "threads counted: $threads, want $((N + 1))"
python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) > 0 else 1)' "$held_ms" || fail "no stall figure"
# The hold is bounded at 2 s (issue 25): on a machine too loaded to hold
# them all within it, they are let go early and the reason is said.
if grep -q "ms bound" "$TMP/c.err"; then
    echo "bound: $(grep "ms bound" "$TMP/c.err")"
    grep -q '"registers_not_read_why": "[^"]*ms bound' "$TMP/c.json" || [ "$regs" = $((N + 1)) ] ||
        fail "the JSON does not say why the registers were not read"
else
    # A thread may miss the 200 ms stop on a loaded machine: nearly all held.
    [ "$regs" -gt 4096 ] && [ "$regs" -ge $((N + 1 - 50)) ] || fail "threads held for their registers: $regs of $threads"
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 2000 else 1)' "$held_ms" ||
        fail "stall $held_ms ms, past the 2 s bound, and no reason said"
fi
kill -USR1 "$P"
wait_for_line "$TMP/census_threads.out" "^verify" 20 || fail "the target did not verify"
grep -q "^verify ok ($N threads waiting" "$TMP/census_threads.out" || fail "$(cat "$TMP/census_threads.out")"
awk '/^TracerPid:/ && $2 != 0 {bad++} /^State:/ && $2 == "t" {bad++} END {exit bad > 0}' /proc/"$P"/task/*/status ||
    fail "a thread of $P is still traced or stopped"
ok "$N threads: $regs of $threads held (stall $held_ms ms), census in $ms ms, the target's data intact"
