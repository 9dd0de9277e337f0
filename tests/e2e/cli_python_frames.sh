#!/usr/bin/env bash
# cli_python_frames: a CPython with debug information (pyenv builds it so)
# allocates under long chains of inlined interpreter frames. The text
# report folds each chain into its physical frame and says how many it
# folded, so that the interpreter loop, which dispatched the script's own
# bytecode, is still among the 8 lines shown: unfolded it sits deeper than
# the cap, which JSON (every frame kept) proves for the same profile.
. "$(dirname "$0")/lib.sh"

# A python whose libpython (or binary) carries .debug_info.
has_debug_info() { readelf -S "$1" 2>/dev/null | grep -q '\.debug_info'; }
PY=
for cand in $(ls -d /root/.pyenv/versions/3.1[0-9]*/bin/python3.1[0-9] 2>/dev/null | sort -rV) \
    "$(command -v python3 2>/dev/null)" /usr/bin/python3; do
    [ -x "$cand" ] || continue
    lib=$(ldd "$cand" 2>/dev/null | awk '/libpython/{print $3}')
    if has_debug_info "${lib:-$cand}"; then PY=$cand; break; fi
done
[ -n "$PY" ] || skip "no CPython 3.10+ with debug information here (pyenv builds one; Debian's needs python3.11-dbgsym)"
echo "python: $PY"

cat >"$TMP/grow.py" <<'PY'
import sys, time
def build_index(store, n):
    for i in range(n):
        store.setdefault(i % 5000, []).append(("k%d" % i) * 20)
store = {}
print("ready", flush=True)
while True:
    build_index(store, 20000)
    if len(store[0]) > 2000:
        store.clear()
    time.sleep(0.01)
PY
"$PY" "$TMP/grow.py" >"$TMP/py.out" 2>"$TMP/py.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/py.out" '^ready' 20 || fail "python did not start: $(cat "$TMP/py.err")"

"$HEAPINJECT" -p "$TPID" --duration 2 -q --rate 64K --format json -o "$TMP/p.json" 2>"$TMP/err.txt" ||
    fail "heapinject failed: $(cat "$TMP/err.txt")"
"$HEAPINJECT" report "$TMP/p.json" >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "report failed: $(cat "$TMP/err.txt")"
cat "$TMP/report.txt"

# In JSON: a stack where the interpreter loop lies deeper than 8 frames
# (inlined ones counted) and at least two inlined libpython frames come
# before it. Its first frame's function and line identify it in text.
python3 - "$TMP/p.json" >"$TMP/deep.txt" <<'PY' || fail "no JSON stack puts _PyEval_EvalFrameDefault below the 8-frame cap: $(cat "$TMP/deep.txt")"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
for s in d["stacks"]:
    fr = s["frames"]
    names = [f.get("function") or "" for f in fr]
    if "_PyEval_EvalFrameDefault" not in names:
        continue
    at = names.index("_PyEval_EvalFrameDefault")
    if at >= 8 and sum(1 for f in fr[:at] if f.get("inlined")) >= 2:
        print(names[0])
        sys.exit(0)
print("deepest positions:", sorted(n.index("_PyEval_EvalFrameDefault") for n in
      ([f.get("function") or "" for f in s["frames"]] for s in d["stacks"]) if "_PyEval_EvalFrameDefault" in n))
sys.exit(1)
PY
first=$(head -1 "$TMP/deep.txt")
echo "deep stack starts at $first"

# In text: a stack that starts there shows the loop within its 8 lines,
# and its folded lines say how many frames they fold.
python3 - "$TMP/report.txt" "$first" <<'PY' ||
import re, sys
text, first = open(sys.argv[1]).read(), sys.argv[2]
# "Top N of M stacks" when there are more than shown (pymalloc's stacks, issue 29)
stacks = re.split(r"(?:All|Top [0-9]+ of [0-9]+) stacks by live bytes", text)[1].split("\nFunctions by")[0]
for blk in re.split(r"\n#[0-9]+ ", stacks)[1:]:
    lines = [l.strip() for l in blk.splitlines()[1:] if l.startswith("        ") and not l.strip().startswith("(")]
    if lines and lines[0].split()[0] == first and len(lines) <= 8 and \
            any(l.startswith("_PyEval_EvalFrameDefault") for l in lines) and \
            any(re.search(r"\(([0-9]+) library frames? inlined in it folded\)$", l) for l in lines):
        sys.exit(0)
sys.exit(1)
PY
    fail "the text report does not show _PyEval_EvalFrameDefault, with folded inline chains, in a stack starting at $first"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "python: inlined interpreter frames folded, the interpreter loop shown within the cap"
