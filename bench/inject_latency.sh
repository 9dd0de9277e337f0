#!/usr/bin/env bash
# inject_latency.sh - how long `heapinject inject` takes from command start
# until the library is loaded in the target, over N runs (default 20);
# prints each run and the median in milliseconds.
#
#   bench/inject_latency.sh [RUNS] [--via ptrace|gdb]
#
# The target sleeps in nanosleep (a typical idle service thread). Each run
# loads a fresh copy of a small library, so every run pays for a real
# dlopen rather than a reference count bump on an already loaded one.
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-20}
VIA=${3:-ptrace}
[ "${2:-}" = --via ] || VIA=ptrace
HI=build/heapinject
TARGET=build/targets/inj_wait
if [ ! -x "$HI" ] || [ ! -x "$TARGET" ]; then
    make --no-print-directory all build/targets/inj_wait >/dev/null || exit 1
fi
TMP=$(mktemp -d /tmp/hi-bench.XXXXXX)
trap '{ kill -9 $T; wait $T; } 2>/dev/null; rm -rf "$TMP"' EXIT

gcc -shared -fPIC -O1 -o "$TMP/lib.so" tests/e2e/inject_testlib.c || exit 1
for i in $(seq 1 "$RUNS"); do cp "$TMP/lib.so" "$TMP/lib_$i.so"; done

"$TARGET" nanosleep 3600 >"$TMP/target.out" &
T=$!
for _ in $(seq 100); do grep -q ready "$TMP/target.out" 2>/dev/null && break; sleep 0.05; done

times=()
for i in $(seq 1 "$RUNS"); do
    t0=$(date +%s%N)
    "$HI" inject -p "$T" --via "$VIA" "$TMP/lib_$i.so" >/dev/null 2>"$TMP/err" \
        || { echo "run $i failed: $(cat "$TMP/err")" >&2; exit 1; }
    t1=$(date +%s%N)
    ms=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", (b - a) / 1e6}')
    times+=("$ms")
    echo "run $i: $ms ms"
done
kill -0 "$T" 2>/dev/null || { echo "target died" >&2; exit 1; }
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{v[NR]=$1} END{print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2}')
echo "inject latency ($VIA, $RUNS runs): median ${median} ms (command start to library loaded)"
