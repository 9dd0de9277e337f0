#!/usr/bin/env bash
# pymalloc_overhead.sh - what sampling pymalloc costs a Python workload
# that builds dicts and lists (issue 29 item 2): the same process runs
# windows of W seconds alone and attached at RATE (default: heapinject's
# default rate), interleaved A B B A ... so that a drift of the machine
# falls on both; each window's figure is loop iterations per CPU second of
# the whole process (the agent's threads included). Prints each window and
# the ratio attached/alone of the medians.
#   bench/pymalloc_overhead.sh [PYTHON] [PAIRS] [W]
# INSTALL=0: do not wait for Python's allocator to be ours (a build
# without pymalloc sampling, for comparison: the malloc hooks alone).
# Run it inside a private mount namespace with its own /tmp (COMMON.md).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
HI=${HEAPINJECT:-$ROOT/build/heapinject}
PY=${1:-/usr/bin/python3}; PAIRS=${2:-4}; W=${3:-3}
RATE_ARGS=(); [ -n "${RATE:-}" ] && RATE_ARGS=(--rate "$RATE")
T=$(mktemp -d /tmp/pym-bench.XXXXXX)
mkfifo "$T/in"
sleep 100000 >"$T/in" & SP=$!
"$PY" "$ROOT/tests/targets/py_pymalloc.py" <"$T/in" >"$T/out" 2>"$T/err" & TP=$!
trap 'kill $TP $SP 2>/dev/null; rm -rf "$T"' EXIT
cmd() {
    local before; before=$(wc -l <"$T/out")
    echo "$1" >"$T/in"
    for _ in $(seq 1 6000); do
        tail -n +"$((before + 1))" "$T/out" | grep -m1 -- "$2" && return 0
        sleep 0.02
    done
    echo "no '$2' after '$1'" >&2; exit 1
}
until grep -q '^ready' "$T/out"; do sleep 0.05; done
window() { # window attached|alone -> "iters/cpu-s"
    local r; r=$(cmd "churn $W" '^churn iters=')
    python3 -c 'import sys; i, c = sys.argv[1].split()[1:]; print("%.1f" % (int(i.split("=")[1]) / float(c.split("=")[1])))' "$r"
}
attached() {
    "$HI" attach -p "$TP" "${RATE_ARGS[@]}" >/dev/null 2>&1 || exit 1
    [ "${INSTALL:-1}" = 0 ] || until [ "$(cmd name '^name=')" = name=None ]; do sleep 0.05; done
    local v; v=$(window); echo "attached $v"
    "$HI" detach -p "$TP" >/dev/null 2>&1 || exit 1
    [ "$(cmd name '^name=')" = name=pymalloc ] || { echo "not restored" >&2; exit 1; }
}
alone() { local v; v=$(window); echo "alone $v"; }
cmd "churn 1" '^churn' >/dev/null # warm up
for ((i = 0; i < PAIRS; i++)); do
    if ((i % 2 == 0)); then alone; attached; else attached; alone; fi
done | tee "$T/res"
python3 - "$T/res" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
a = statistics.median(float(v) for k, v in rows if k == "alone")
b = statistics.median(float(v) for k, v in rows if k == "attached")
print(f"median iterations per CPU second: alone {a:.1f}, attached {b:.1f}: attached/alone {b / a:.3f}")
PY
