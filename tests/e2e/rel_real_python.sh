#!/usr/bin/env bash
# rel_real_python: Debian's python3 (an interpreter we did not write: no
# frame pointers, pymalloc in front of malloc) running a script whose
# memory keeps growing (tests/stress/rel_grow.py). While it runs: a
# one-shot `heapinject -p` session, then attach / snapshot / detach. The
# script checks every record it kept (CRCs) and finds no error, the
# reports name CPython's allocation functions, the growing stacks are
# found, and the script's own ops/s after detach match before attach.
# That comparison is made against a second copy of the script that is
# never profiled (the control), running at the same time and pinned to the
# same core as the target, so that whatever else this shared machine does
# hits both alike (unpinned, one of the two could get a core to itself for
# seconds: 0.57 once). Per phase, the median of the target's 0.25 s ticks
# over the control's; after/before below 0.8 fails (it scatters by about
# +-10% here).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
PY=/usr/bin/python3
[ -x "$PY" ] || { "$ROOT/scripts/deps.sh" python3 >/dev/null 2>&1 || skip "no /usr/bin/python3"; }

mkdir -p "$TMP/ctl"
PIN=(); command -v taskset >/dev/null && PIN=(taskset -c "$(($(nproc) - 1))")
"${PIN[@]}" "$PY" "$ROOT/tests/stress/rel_grow.py" "$TMP" >"$TMP/py.out" 2>"$TMP/py.err" &
PPID_=$!
PIDS+=("$PPID_")
"${PIN[@]}" "$PY" "$ROOT/tests/stress/rel_grow.py" "$TMP/ctl" >"$TMP/ctl.out" 2>"$TMP/ctl.err" &
CPID=$!
PIDS+=("$CPID")
wait_for_line "$TMP/py.out" '^ready' 20 || fail "the script did not start: $(cat "$TMP/py.err")"
wait_for_line "$TMP/ctl.out" '^ready' 20 || fail "the control did not start: $(cat "$TMP/ctl.err")"
# phase N: both copies enter phase N (0 before attach, 1 profiled, 2 after).
phase() { touch "$TMP/phase.$1" "$TMP/ctl/phase.$1"; }
sleep 3
phase 1
"$HEAPINJECT" -p "$PPID_" --rate 256K --duration 3 -o "$TMP/session.txt" 2>"$TMP/session.err" ||
    fail "session failed: $(cat "$TMP/session.err")"
"$HEAPINJECT" attach -p "$PPID_" --rate 64K >/dev/null 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
sleep 1.5
"$HEAPINJECT" snapshot -p "$PPID_" --by function -o "$TMP/byfn.txt" 2>"$TMP/s.err" || fail "snapshot: $(cat "$TMP/s.err")"
"$HEAPINJECT" snapshot -p "$PPID_" --leaks -o "$TMP/leaks.txt" 2>"$TMP/s.err" || fail "snapshot --leaks: $(cat "$TMP/s.err")"
"$HEAPINJECT" detach -p "$PPID_" 2>"$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
rel_untraced "$PPID_"
rel_hooks_gone "$PPID_" >/dev/null
phase 2
sleep 4
touch "$TMP/stop" "$TMP/ctl/stop"
for _ in $(seq 600); do alive "$PPID_" || alive "$CPID" || break; sleep 0.05; done
wait "$CPID"
wait "$PPID_"; rc=$?
done_line=$(grep '^done' "$TMP/py.out")
echo "$done_line"
[ "$rc" = 0 ] && grep -q 'errors=0' <<<"$done_line" || fail "the script exited $rc: $done_line $(tail -5 "$TMP/py.err")"

# Debian's python3.11 is stripped: its static helpers (list_resize,
# _PyObject_Malloc, ...) show as python3.11+0x...; its exported functions
# have names, above all the interpreter loop every Python allocation comes
# from. Finding it means the stacks were unwound through a binary without
# frame pointers.
fns='_PyEval_EvalFrameDefault|PyEval_EvalCode|PyObject_Malloc|PyMem_[A-Za-z]*|PyUnicode_[A-Za-z]*|PyList_[A-Za-z]*|_PyRun_[A-Za-z]*'
for f in session byfn leaks; do
    grep -q "_PyEval_EvalFrameDefault" "$TMP/$f.txt" ||
        fail "$f report: no stack through CPython's _PyEval_EvalFrameDefault: $(head -40 "$TMP/$f.txt")"
done
grep -Eq "live [1-9][0-9.]* [KMG]iB" "$TMP/leaks.txt" || fail "the leaks report shows no live memory: $(head -20 "$TMP/leaks.txt")"
echo "CPython functions named: $(grep -Eo "$fns" "$TMP/byfn.txt" | sort -u | tr '\n' ' ')"

# ops/s before attach (first second left out), during, and after detach:
# medians of the 0.25 s ticks (a neighbour's burst moves a mean, not a
# median), of the target and of the control.
rates() {
    python3 - "$1" <<'PY'
import statistics, sys
ph = {0: [], 1: [], 2: []}
for line in open(sys.argv[1]):
    p = line.split()
    if p and p[0] == "tick":
        ph[int(p[1])].append(int(p[2]))
ph[0] = ph[0][4:]
print(" ".join(str(int(statistics.median(v))) if v else "0" for v in (ph[0], ph[1], ph[2])))
PY
}
read -r before during after <<<"$(rates "$TMP/py.out")"
read -r cbefore cduring cafter <<<"$(rates "$TMP/ctl.out")"
((before > 0 && after > 0 && cbefore > 0 && cafter > 0)) || fail "no rates: $before $after $cbefore $cafter"
ratio=$(awk -v a="$after" -v b="$before" -v ca="$cafter" -v cb="$cbefore" 'BEGIN {printf "%.2f", (a / ca) / (b / cb)}')
echo "ops/s: before $before (control $cbefore), during $during ($cduring), after $after ($cafter)"
echo "after/before, each against the control: $ratio"
awk -v r="$ratio" 'BEGIN {exit !(r >= 0.8)}' || fail "the script runs at $ratio of its speed after detach"
echo "RESULT rel_real_python before_ops=$before during_ops=$during after_ops=$after ratio=$ratio errors=0"
ok "python3 with a growing heap: records intact, CPython functions named, ratio $ratio"
