#!/usr/bin/env bash
# cli_jit: code in anonymous executable memory (a JIT's) that leads to
# malloc. tests/targets/cli_jit calls malloc (through alloc_for_jit) from
# machine code it wrote into an anonymous r-x mapping. Every format marks
# that frame [jit] with an offset into its mapping: text ("[jit]+0x6",
# "mapping at 0x..."), JSON (module "[jit]", "mapping"), collapsed, pprof
# (a mapping named [jit], the location named), and --by module has a [jit]
# row instead of "(unknown)". Then node, if installed: V8's JIT frames are
# [jit] (they were attributed to /usr/bin/node with the absolute address
# as offset) and its remapped builtins are named.
. "$(dirname "$0")/lib.sh"

start_target cli_jit
JIT=$(sed -n 's/^ready jit=0x\([0-9a-f]*\)$/\1/p' "$TMP/cli_jit.out")
[ -n "$JIT" ] || fail "the target did not say where its code is"
grep -q "^0*$JIT-[0-9a-f]* r-xp 00000000 00:00 0 " "/proc/$TPID/maps" || fail "the code is not in an anonymous r-x mapping"
H=(-p "$TPID" --duration 1 -q --rate 16K)

"$HEAPINJECT" "${H[@]}" >"$TMP/report.txt" 2>"$TMP/err.txt" || fail "heapinject failed: $(cat "$TMP/err.txt")"
cat "$TMP/report.txt"
awk '/^#1 /{top=1; next} /^$/{if (top) exit} top' "$TMP/report.txt" >"$TMP/top.txt"
grep -A1 '^ *alloc_for_jit ' "$TMP/top.txt" | grep -qE "^ *\[jit\]\+0x6 +mapping at 0x0*$JIT\$" ||
    fail "text: the caller of alloc_for_jit is not '[jit]+0x6  mapping at 0x$JIT'"

"$HEAPINJECT" "${H[@]}" --format json -o "$TMP/p.json" 2>"$TMP/err.txt" || fail "json failed: $(cat "$TMP/err.txt")"
python3 - "$TMP/p.json" "$JIT" <<'PY' || fail "json: the JIT frame is not marked [jit] with its mapping"
import hi_profile, json, sys
d, jit = hi_profile.load(sys.argv[1]), int(sys.argv[2], 16)
fr = [f for s in d["stacks"] for f in s["frames"] if jit <= int(f["addr"], 16) < jit + 4096]
assert fr, "no frame in the JIT code"
for f in fr:
    print(f)
    assert f["module"] == "[jit]" and f["function"] is None, f
    assert int(f["module_offset"], 16) == int(f["addr"], 16) - jit == 6, f
    assert f["mapping"] == "%x-%x r-xp" % (jit, jit + 4096), f
PY

"$HEAPINJECT" "${H[@]}" --format collapsed -o "$TMP/c.txt" 2>"$TMP/err.txt" || fail "collapsed failed"
grep -q ';\[jit\]+0x6;alloc_for_jit [0-9]*$' "$TMP/c.txt" || fail "collapsed: no ;[jit]+0x6;alloc_for_jit stack: $(cat "$TMP/c.txt")"

"$HEAPINJECT" "${H[@]}" --format pprof -o "$TMP/p.pb.gz" 2>"$TMP/err.txt" || fail "pprof failed"
"$HEAPINJECT" report "$TMP/p.pb.gz" --format collapsed -o "$TMP/pc.txt" 2>"$TMP/err.txt" ||
    fail "pprof read back failed: $(cat "$TMP/err.txt")"
grep -q ';\[jit\]+0x6;alloc_for_jit ' "$TMP/pc.txt" || fail "pprof: the JIT frame is not named [jit]+0x6: $(cat "$TMP/pc.txt")"
if command -v go >/dev/null; then
    timeout 120 go tool pprof -raw "$TMP/p.pb.gz" >"$TMP/raw.txt" 2>&1 || fail "go tool pprof cannot read it: $(tail -3 "$TMP/raw.txt")"
    grep -qE "^ *[0-9]+: 0x0*$JIT/[0-9a-fx]+/0x0 \[jit\]" "$TMP/raw.txt" || fail "pprof: no mapping named [jit] at 0x$JIT"
fi

"$HEAPINJECT" "${H[@]}" --by module >"$TMP/mod.txt" 2>"$TMP/err.txt" || fail "--by module failed"
cat "$TMP/mod.txt" | sed -n '/modules;/,$p'
grep -qE '^[0-9]+ .* \[jit\]$' "$TMP/mod.txt" || fail "--by module: no [jit] row"
grep -q '(unknown)' "$TMP/mod.txt" && fail "--by module still has an (unknown) row"
assert_alive "$TPID"
assert_not_traced "$TPID"
kill -9 "$TPID"

if ! command -v node >/dev/null; then
    ok "JIT frames marked [jit] in text, json, collapsed, pprof and --by module (node not installed: V8 not tried)"
    exit 0
fi
cat >"$TMP/alloc.js" <<'JS'
const keep = [];
function hot(i) { const b = Buffer.alloc(4096 + (i % 100)); b[0] = i; return b; }
let i = 0;
setInterval(() => { for (let k = 0; k < 200; k++) { keep.push(hot(i++)); if (keep.length > 20000) keep.shift(); } }, 1);
console.log("ready");
JS
node "$TMP/alloc.js" >"$TMP/node.out" 2>&1 &
NPID=$!; PIDS+=("$NPID")
wait_for_line "$TMP/node.out" ready 20 || fail "node did not start: $(cat "$TMP/node.out")"
sleep 1 # let V8 compile hot() and its callers
"$HEAPINJECT" -p "$NPID" --duration 2 -q --rate 64K --format json -o "$TMP/node.json" 2>"$TMP/err.txt" ||
    fail "heapinject on node failed: $(cat "$TMP/err.txt")"
python3 - "$TMP/node.json" <<'PY' || fail "node: JIT frames wrong"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
frames = [f for s in d["stacks"] for f in s["frames"]]
jit = [f for f in frames if f["module"] == "[jit]"]
print("%d frames, %d [jit]" % (len(frames), len(jit)))
assert jit, "no [jit] frame in node's stacks"
for f in jit:
    assert f["mapping"] and int(f["module_offset"], 16) < 1 << 32, f
# No frame of a file carries its absolute address as offset (the JIT
# frames did, attributed to /usr/bin/node).
bad = [f for f in frames if f["module"] and f["module"].startswith("/") and int(f["module_offset"], 16) >= 1 << 40]
assert not bad, bad[:3]
named = [f for f in frames if (f["function"] or "").startswith("Builtins_")]
assert named, "no V8 builtin named"
PY
assert_alive "$NPID"
ok "JIT frames marked [jit] in every format; node's V8 frames too"
