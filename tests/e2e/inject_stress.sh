#!/usr/bin/env bash
# 50 injections in a row into a 32-thread process that allocates at full
# speed on every thread (main included): each call returns the next counter
# value (1..50), nothing crashes or hangs, and the target's own checksums of
# every heap block stay right.
source "$(dirname "$0")/inject_common.bash"
build_testlib

# 1200 s: a guard against an orphan only (the stop file ends the run);
# 50 injections under load 10 on 2 cores took longer than 150 s.
start_target inj_stress "$TMP/stop" 1200
retries=0
for i in $(seq 1 50); do
    "$HEAPINJECT" inject -v -p "$TPID" "$LIB" hi_test_count >"$TMP/inj.out" 2>"$TMP/inj.err"
    RC=$?
    [ "$RC" = 0 ] || { cat "$TMP/inj.err"; fail "injection $i exited with $RC"; }
    grep -qx "called hi_test_count(NULL) = $i" "$TMP/inj.out" \
        || fail "injection $i: expected = $i, got: $(cat "$TMP/inj.out")"
    retries=$((retries + $(grep -c 'retrying' "$TMP/inj.err")))
    alive "$TPID" || fail "target died after injection $i: $(cat "$TMP/inj_stress.err")"
done
assert_fine "$TPID"
echo "50 injections done; $retries retries because a thread was in an unsafe place"
touch "$TMP/stop"
wait_exit "$TPID" 60
cat "$TMP/inj_stress.out"
[ "$WRC" = 0 ] || fail "target exited with $WRC: $(cat "$TMP/inj_stress.err")"
grep -Eq '^stress threads=32 ops=[1-9][0-9]* errors=0$' "$TMP/inj_stress.out" || fail "heap checksums failed"
ok "50 injections into 32 allocating threads"
