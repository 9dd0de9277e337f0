#!/bin/bash
# census_threads.sh - a census of a process with 10,001 threads (issue 25,
# item 9b): the report counts every thread (10,002 with the main one),
# holds them all for their registers (a census held at most 4,096 until
# s16; up to 32,768 now) and says what that costs (the stall is printed),
# within the 2 s bound or with the reason it let them go.
# Before: "4096 of 4096 threads' stacks", as if there were no more.
# The target checks its blocks and that every thread still waits.
# Schedule: alone (10,002 threads held under a 2 s bound)
. "$(dirname "$0")/lib.sh"

start_target census_threads 10001
P=$TPID
t0=$(date +%s%N)
"$HEAPINJECT" census -p "$P" >"$TMP/c.txt" 2>"$TMP/c.err" || fail "census: exit $?: $(cat "$TMP/c.err")"
ms=$((($(date +%s%N) - t0) / 1000000))
grep -E "stall|threads held|Notes" "$TMP/c.txt"
grep -Eq "stall [0-9.]+ ms \(threads held for their registers" "$TMP/c.txt" || fail "the stall is not printed"
grep -Eq "[0-9]+ of 10002 threads' stacks" "$TMP/c.txt" || fail "the threads are not all counted"
regs=$(grep -Eo "the registers of [0-9]+ threads" "$TMP/c.txt" | grep -Eo "[0-9]+")
echo "registers of ${regs:-?} of 10002 threads read"
# The hold is bounded (issue 25): every thread held within 2 s, or let go
# early with the reason said (on a machine too loaded to stop 10,002
# threads, fork and let them go in 2 s). Before: 0.5 ms a thread, a stall
# of 2.7-4.7 s here and nothing said.
held=$(grep -Eo "stall [0-9.]+ ms \(threads held" "$TMP/c.txt" | grep -Eo "[0-9.]+" | head -1)
if grep -q "ms bound" "$TMP/c.err"; then
    echo "bound: $(grep "ms bound" "$TMP/c.err")"
    [ "${regs:-0}" = 10002 ] || grep -q "were not read (.*ms bound" "$TMP/c.txt" || fail "the report does not say why"
else
    python3 -c 'import sys; sys.exit(0 if float(sys.argv[1]) <= 2000 else 1)' "$held" ||
        fail "stall $held ms, past the 2 s bound, and no reason said"
    # A thread may miss the 200 ms stop on a loaded machine: nearly all held.
    [ "${regs:-0}" -ge 9900 ] || fail "the threads are not all held: registers of ${regs:-none} of 10002"
    if [ "$regs" -lt 10002 ]; then
        grep -q "The registers of $((10002 - regs)) threads were not read" "$TMP/c.txt" || fail "no word of the threads not held"
    fi
fi
kill -USR1 "$P"
wait_for_line "$TMP/census_threads.out" "^verify" 20 || fail "the target did not verify"
grep -q "^verify ok (10001 threads waiting" "$TMP/census_threads.out" || fail "$(cat "$TMP/census_threads.out")"
# one awk over the 10,002 status files (lib.sh's check runs one per thread: ~20 s here)
awk '/^TracerPid:/ && $2 != 0 {bad++} /^State:/ && $2 == "t" {bad++} END {exit bad > 0}' /proc/"$P"/task/*/status ||
    fail "a thread of $P is still traced or stopped"
ok "10,001 threads: $regs of 10002 held, stall $held ms, census in $ms ms, the target's data intact"
