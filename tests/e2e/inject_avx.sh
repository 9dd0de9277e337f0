#!/usr/bin/env bash
# the AVX state of the injected thread survives injection: build/targets/
# inj_avx keeps known values in every vector register (ymm0-15 upper halves;
# zmm0-31 and k1-k7 with AVX-512; PKRU where the OS enables protection keys)
# in a tight loop in the main thread, the one heapinject picks, and counts
# every change it sees. It is injected 20 times: a library function that
# overwrites all of them (ptrace and --via gdb), and real attach/detach
# cycles (dlopen of the payload runs glibc's AVX2/EVEX string functions).
# After each one the loop must have run on and seen no change.
# The gdb injections go to a second target that keeps ymm0-15 only: gdb 13
# assumes Intel's fixed XSAVE offsets for the AVX-512 components, and on a
# CPU whose layout differs (AMD Zen 4: the opmask at 832, not 1088) its
# calls put zmm0-7's upper halves and k1-k7 back wrong (gdb 14 reads the
# layout from CPUID). The ptrace path restores the kernel's own XSAVE image
# and is checked on everything.
source "$(dirname "$0")/inject_common.bash"
grep -qw avx2 /proc/cpuinfo || skip "this CPU has no AVX2 (no YMM state to check)"
CLOB="$TMP/libavxclobber.so"
gcc -shared -fPIC -O1 -o "$CLOB" "$ROOT/tests/e2e/inject_avx_clobber.c" || fail "cannot build $CLOB"

# run_target OUTFILE [avx2]: starts inj_avx; sets TPID.
run_target() {
    local out=$1; shift
    "$TARGETS/inj_avx" "$@" >"$out" 2>&1 &
    TPID=$!; PIDS+=("$TPID")
    wait_for_line "$out" '^ready' 10 || fail "inj_avx did not start: $(cat "$out")"
}

# state OUTFILE: the last full "iter N bad M" line; sets ITER and BAD.
state() {
    local line
    line=$(grep '^iter [0-9]* bad [0-9]*$' "$1" | tail -1)
    ITER=${line#iter }; ITER=${ITER%% *}
    BAD=${line##* }
}

# check PID OUTFILE WHAT: the loop ran at least 10,000 more checks after
# WHAT and never saw a changed register.
check() {
    local start i
    state "$2"; start=$ITER
    for ((i = 0; i < 100; i++)); do
        state "$2"
        [ "$ITER" -gt $((start + 10000)) ] && break
        sleep 0.05
    done
    [ "$ITER" -gt $((start + 10000)) ] || fail "the register loop stopped after $3 (iter $ITER)"
    [ "$BAD" = 0 ] || fail "after $3: the target saw its vector registers changed ($BAD times, $(grep -m1 '^last change' "$2"); $(grep -m1 '^ready' "$2"))"
    assert_fine "$1"
}

A=$TMP/avx_all.out
run_target "$A"; T=$TPID
features=$(grep -m1 '^ready' "$A")
echo "target: $features"
grep -qw avx512f /proc/cpuinfo || echo "note: no AVX-512 on this CPU: zmm16-31 and k1-k7 not checked (ymm0-15 are)"
case "$features" in *pkru*) ;; *) echo "note: no protection keys enabled (no ospke in /proc/cpuinfo): PKRU not checked";; esac
check "$T" "$A" "start"
n=0
for i in $(seq 14); do
    inject -p "$T" "$CLOB" hi_avx_clobber
    expect_rc 0; expect_out '^called hi_avx_clobber\(NULL\) = [1-7]$'
    n=$((n + 1)); check "$T" "$A" "ptrace injection $n (a call that overwrites every vector register)"
done
for i in 1 2 3 4; do
    "$HEAPINJECT" attach -p "$T" >"$TMP/att.out" 2>&1 || fail "attach: $(cat "$TMP/att.out")"
    n=$((n + 1)); check "$T" "$A" "attach $n (dlopen of the payload)"
    "$HEAPINJECT" detach -p "$T" >"$TMP/det.out" 2>&1 || fail "detach: $(cat "$TMP/det.out")"
done

Y=$TMP/avx_ymm.out
run_target "$Y" avx2; T2=$TPID
check "$T2" "$Y" "start"
for i in 1 2; do
    inject -p "$T2" --via gdb "$CLOB" hi_avx_clobber
    expect_rc 0; expect_out 'hi_avx_clobber.* = [1-7]$'
    n=$((n + 1)); check "$T2" "$Y" "gdb injection $n (a call that overwrites every vector register)"
done
[ "$n" = 20 ] || fail "ran $n injections, not 20"
state "$A"
ok "$n injections: 18 with ptrace into a thread holding ${features#ready features } ($ITER checks, $BAD changes seen), 2 with gdb into one holding ymm0-15"
