#!/usr/bin/env bash
# cli_duration_late: a --duration session that ends late says why. With
# --census on 800 MiB of heap the census takes over a second after the
# 1 s profile; stderr names it ("ended X s after the 1.0 s profile: the
# census Y s, ...") with Y no less than the census's own "in all". A
# session that ends on time says nothing of the kind.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

start_mem_truth -- --inuse 800 --freed 0 --mmap 0
t0=$(date +%s%N)
"$HEAPINJECT" -p "$TPID" --duration 1 --census >"$TMP/r.txt" 2>"$TMP/r.err" || fail "profile: $(cat "$TMP/r.err")"
wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
cat "$TMP/r.err"
inall=$(grep -o '[0-9.]* ms in all' "$TMP/r.txt" | cut -d' ' -f1)
[ -n "$inall" ] || fail "no census in the report: $(head -5 "$TMP/r.txt")"
line=$(grep "^heapinject: ended .* s after the 1.0 s profile" "$TMP/r.err")
if [ -z "$line" ]; then
    # Attach, the final snapshot and detach take well under a second
    # here; a session 2 s past its 1 s without a word is what was wrong.
    [ "$wall_ms" -lt 2000 ] || fail "the session took $wall_ms ms for --duration 1 and said nothing of why"
    skip "the census was quick ($inall ms): nothing to explain"
fi
census_s=$(sed -n 's/.*the census \([0-9.]*\) s.*/\1/p' <<<"$line")
[ -n "$census_s" ] || fail "the line does not name the census: $line"
python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) * 1000 >= 0.9 * float(sys.argv[2]) - 100 else 1)" \
    "$census_s" "$inall" || fail "census $census_s s said, $inall ms in all printed"

# On time: no such line.
"$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/r2.txt" 2>"$TMP/r2.err" || fail "profile: $(cat "$TMP/r2.err")"
grep -q "^heapinject: ended .* after the" "$TMP/r2.err" && fail "a session on time explained itself: $(cat "$TMP/r2.err")"
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 60 || fail "the target did not verify its blocks"
grep -q "^verify ok" "$TMP/mem_truth.out" || fail "the target's blocks: $(grep verify "$TMP/mem_truth.out")"
assert_alive "$TPID"
ok "a late end explained: $line"
