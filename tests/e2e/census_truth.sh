#!/bin/bash
# census_truth.sh - `heapinject census` on heaps whose truth is known, built
# Covers: cli/census/census.c, cli/census/python.c, cli/census/views.c, cli/link/client_census.c, cli/profile/read_census.c, cli/report/census_json.c, cli/report/census_python.c, cli/report/census_text.c, cli/symbolize/census_naming.c, payload/census/py_prepare.c
# before any attach (tests/targets/census_truth.c, census_cxx.cc): in use,
# free, unreachable and the global's retained bytes within 2%; blocks held
# only on 16 threads' stacks credited to those stacks; C++ types within 1%,
# the leaked type unreachable; the target's own data checks pass after; no
# child, zombie or tracer is left (a jemalloc process's refusal: census_refuse);
# the free bytes are exactly glibc's own count (mallinfo2, with 2,000 free
# chunks between held blocks); blocks that only a pointer one past their
# end follows are unreachable;
# blocks held only by memory merged with a library's .bss in the maps, and
# python3's objects held from its pymalloc arenas, are not called leaked.
# Covers: payload/census/census.c, payload/census/heap.c, payload/census/mark.c
. "$(dirname "$0")/lib.sh"

within() { # within VALUE TRUTH PERCENT NAME
    python3 -c "import sys; v,t,p=float(sys.argv[1]),float(sys.argv[2]),float(sys.argv[3]); sys.exit(0 if abs(v-t) <= t*p/100 else 1)" "$1" "$2" "$3" ||
        fail "$4: $1 is not within $3% of $2"
}
jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }

no_child_left() {
    local kids; kids=$(ps -o pid=,stat=,comm= --ppid "$1")
    [ -z "$kids" ] || fail "the census left a child of $1: $kids"
    assert_not_traced "$1"
}

# --- C: list held by a global, leaks, stacks, mmapped chunks, tcache/fastbins --
start_target census_truth
read -r _ list leak stackb bigh bigl fordblks < <(sed -n 's/^truth list_bytes=\([0-9]*\) leak_bytes=\([0-9]*\) stack_bytes=\([0-9]*\) big_held=\([0-9]*\) big_leaked=\([0-9]*\) fordblks=\([0-9]*\)/x \1 \2 \3 \4 \5 \6/p' "$TMP/census_truth.out")
[ -n "$list" ] || fail "no truth line from census_truth"
read -r _ past_n past_usable holes sepb < <(sed -n 's/^truth past_n=\([0-9]*\) past_usable=\([0-9]*\) holes=\([0-9]*\) sep_bytes=\([0-9]*\)/x \1 \2 \3 \4/p' "$TMP/census_truth.out")
[ -n "$past_n" ] && [ "$past_usable" -gt 0 ] ||
    fail "no truth line for the blocks past whose end a pointer points: $(grep past_n "$TMP/census_truth.out")"
past=$((past_n * past_usable))
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/census.err" || fail "census failed: $(cat "$TMP/census.err")"
cat "$TMP/census.err"
inuse=$((list + leak + stackb + bigh + bigl + past + sepb))
within "$(jq_ "$TMP/c.json" "d['in_use']['bytes']")" "$inuse" 2 "in use bytes"
within "$(jq_ "$TMP/c.json" "d['unreachable']['bytes']")" "$((leak + bigl + past))" 2 "unreachable bytes"
within "$(jq_ "$TMP/c.json" "d['unreachable']['blocks']")" $((40002 + past_n)) 2 "unreachable blocks"
within "$(jq_ "$TMP/c.json" "d['mmapped']['blocks']")" 6 0 "mmapped chunks"
# The free bytes are glibc's own count, to the byte: mallinfo2's fordblks
# (every free chunk but tcache's), read by the agent at the census's start
# while the program sleeps. The 2,000 free chunks between the held blocks
# are among them.
free_no_tcache=$(jq_ "$TMP/c.json" "d['free']['bytes'] - d['free']['tcache_bytes']")
fordblks=$(jq_ "$TMP/c.json" "d['glibc_mallinfo']['free']")
[ "$free_no_tcache" = "$fordblks" ] ||
    fail "the census counts $free_no_tcache free bytes (tcache aside), glibc's mallinfo2 $fordblks: $(jq_ "$TMP/c.json" "d['free']")"
# (heapinject's own attach, its dlopen, may take a few of them)
[ "$(jq_ "$TMP/c.json" "d['free']['blocks'] - d['free']['tcache_blocks'] - d['free']['fastbin_blocks'] >= $holes * 0.9")" = True ] ||
    fail "the $holes free chunks between held blocks are not all counted: $(jq_ "$TMP/c.json" "d['free']")"
# A pointer one past a block's end (at the next chunk's header) holds
# nothing: every block of that size is unreachable.
pe=$(jq_ "$TMP/c.json" "[(s['blocks'], s['unreachable_blocks']) for s in d['sizes'] if s['size'] == $past_usable]")
[ "$pe" = "[($past_n, $past_n)]" ] ||
    fail "(blocks, unreachable) of $past_usable bytes: $pe, want [($past_n, $past_n)]: a pointer one past a block's end kept it"
[ "$(jq_ "$TMP/c.json" "d['free']['tcache_blocks'] > 100 and d['free']['fastbin_blocks'] > 100")" = True ] ||
    fail "tcache and fastbin chunks not found: $(jq_ "$TMP/c.json" "d['free']")"
g=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['name'].startswith('g_list '))")
within "$g" "$list" 2 "bytes retained by g_list"
s=$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['kind'] == 'stack')")
within "$s" "$stackb" 2 "bytes retained by the 16 threads' stacks"
[ "$(jq_ "$TMP/c.json" "len([r for r in d['roots'] if r['kind'] == 'stack' and r['retained_blocks'] >= 100])")" = 16 ] ||
    fail "not 16 stacks holding 100 blocks each"
echo "stall $(jq_ "$TMP/c.json" "d['stall_ms']") ms, scan $(jq_ "$TMP/c.json" "d['scan_ms']") ms"
no_child_left "$TPID"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_truth.out" "verify" 10 || fail "target did not verify"
grep -q "verify ok" "$TMP/census_truth.out" || fail "target data damaged: $(grep verify "$TMP/census_truth.out")"
grep -q "BAD" "$TMP/census_truth.out" && fail "a thread's blocks were damaged"
# the text report names the global and shows the leaked pattern
"$HEAPINJECT" census -q -p "$TPID" >"$TMP/c.txt" || fail "text census failed"
grep -q "g_list (census_truth)" "$TMP/c.txt" || fail "text census does not name g_list: $(cat "$TMP/c.txt")"
# A global past the executable's last file page (the maps show that part
# of .bss as anonymous memory) is named from the executable's symbols.
t=$(jq_ "$TMP/c.json" "[r['retained_bytes'] for r in d['roots'] if r['name'] == 'g_bss_tail (census_truth)']")
[ "$t" = "[1000]" ] || [ "$t" = "[1008]" ] ||
    fail "the block held from .bss past the file is not credited to g_bss_tail: $t; $(jq_ "$TMP/c.json" "[r['name'] for r in d['roots'] if r['kind'] == 'global'][:12]")"
grep -q "|XXXXXXXXXXXXXXXX|" "$TMP/c.txt" || fail "text census shows no preview of the leaked blocks"
grep -Eq "stall [0-9.]+ ms" "$TMP/c.txt" || fail "no stall in the text census"
no_child_left "$TPID"
assert_alive "$TPID"
# the one-shot profile with --census: both in one report, which reads back
"$HEAPINJECT" -p "$TPID" --duration 0.5 --census --format json -q -o "$TMP/p.json" || fail "heapinject -p --census failed"
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert 'stacks' in d and 'memory' in d, list(d)
assert abs(d['census']['unreachable']['blocks'] - 40002 - int(sys.argv[2])) <= 800, d['census']['unreachable']['blocks']
" "$TMP/p.json" "$past_n" || fail "the one-shot report lacks the census"
"$HEAPINJECT" report "$TMP/p.json" --format text >/dev/null || fail "a report with a census does not read back"
"$HEAPINJECT" -p "$TPID" --duration 0.5 --census -q -o "$TMP/p.txt" || fail "heapinject -p --census (text) failed"
grep -q "^Census of pid $TPID" "$TMP/p.txt" || fail "the text report lacks the census"
no_child_left "$TPID"
ok "heapinject -p --census: profile and census in one report (text and json)"
ok "C heap: in use, unreachable, g_list and stacks within 2%, free bytes exact; one-past-the-end pointers hold nothing; data intact; nothing left behind"

# --- C++: types by vtable, the leaked type unreachable ---------------------------
start_target census_cxx
"$HEAPINJECT" census -q -p "$TPID" --format json -o "$TMP/x.json" || fail "C++ census failed"
types() { jq_ "$TMP/x.json" "{t['type']: (t['blocks'], t['unreachable_blocks']) for t in d['types']}.get('$1', (0, 0))[$2]"; }
within "$(types Session 0)" 50000 1 "Session objects"
within "$(types Request 0)" 20000 1 "Request objects"
within "$(types Request 1)" 20000 1 "unreachable Request objects"
[ "$(types Session 1)" -le 500 ] || fail "Session objects counted unreachable: $(types Session 1)"
# g_cache holds its pages through one C++ object: the root says so
# (what it shares with another root, a thread's stack holding a page, is on
# a shared record that names it)
via=$(jq_ "$TMP/x.json" "[(r['name'], r.get('via'), r['retained_bytes'] + sum(x['retained_bytes'] for x in d['roots'] if x['kind'] == 'shared' and 'g_cache (' in x['name'])) for r in d['roots'] if r['name'].startswith('g_cache ')]")
python3 -c "import sys; r=eval(sys.argv[1]); sys.exit(0 if len(r) == 1 and r[0][1] == 'Cache' and '-> Cache object' in r[0][0] and 1000000 <= r[0][2] <= 1100000 else 1)" "$via" ||
    fail "g_cache's root does not say it holds ~1 MB through a Cache object: $via"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_cxx.out" "verify" 10 && grep -q "verify ok" "$TMP/census_cxx.out" || fail "C++ target data damaged"
no_child_left "$TPID"
ok "C++: Session and Request counted by type within 1%, the leaked Requests unreachable"

# --- memory the kernel merged with a library's .bss ----------------------------
# A region mapped right after libc's .bss reads as one line of the maps with
# it; the blocks only that region points to are reachable (the census once
# skipped the whole line as "a module's data, already scanned").
start_target census_merged
if grep -q 'merged=1' "$TMP/census_merged.out"; then
    "$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/m.json" 2>"$TMP/m.err" || fail "census failed: $(cat "$TMP/m.err")"
    [ "$(jq_ "$TMP/m.json" "d['in_use']['blocks']")" -ge 2000 ] || fail "the 2000 blocks were not found"
    unr=$(jq_ "$TMP/m.json" "d['unreachable']['bytes']")
    [ "$unr" -lt 65536 ] || fail "$unr bytes unreachable: the blocks held by the merged region were called leaked"
    no_child_left "$TPID"
else
    echo "no gap after libc's .bss to map into: merged case not checked"
fi
ok "blocks held by memory merged with libc's .bss: reachable"

# --- python3: objects held from pymalloc's arenas --------------------------------
# CPython keeps its small objects in arenas it maps itself (anonymous
# memory, roots to the census); its larger objects are malloc blocks that
# only those arenas point to. None of 20,000 live 1000-byte bytearrays may
# be called leaked (they were, whenever an arena lay behind a library's .bss).
PY=/usr/bin/python3
cat >"$TMP/py_hold.py" <<'PYEOF'
import sys, time
held = [bytearray(1000) for _ in range(20000)]
names = [str(i) * 3 for i in range(100000)]
print("ready", flush=True)
time.sleep(120)
PYEOF
"$PY" "$TMP/py_hold.py" >"$TMP/py.out" 2>&1 &
PYP=$!; PIDS+=("$PYP")
wait_for_line "$TMP/py.out" ready 20 || fail "python did not start"
"$HEAPINJECT" census -p "$PYP" --format json -o "$TMP/py.json" 2>"$TMP/py.err" || fail "census of python3 failed: $(cat "$TMP/py.err")"
grep -i "pymalloc\|python" "$TMP/py.err" || true
unr=$(jq_ "$TMP/py.json" "d['unreachable']['bytes']")
inuse=$(jq_ "$TMP/py.json" "d['in_use']['bytes']")
echo "python3: in use $inuse bytes, unreachable $unr bytes"
[ "$inuse" -ge 20000000 ] || fail "python3: the 20,000 bytearrays' buffers not found ($inuse bytes in use)"
[ "$unr" -lt 1048576 ] || fail "python3: $unr bytes called unreachable (the bytearrays are live)"
assert_alive "$PYP"
no_child_left "$PYP"
ok "python3: 20,000 live bytearrays held from pymalloc's arenas, none called leaked"

# --- joined with sampling: what was allocated since attach, and where -----------
# A program allocating under an attached profiler: the census of its heap
# says, per size group, how much was allocated since attach and names the
# stack that allocated most of it (its own functions, symbolized).
start_target cli_leaky --threads 1
"$HEAPINJECT" attach -p "$TPID" --rate 4K -q || fail "attach failed"
sleep 1.5
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/sa.json" 2>"$TMP/sa.err" || fail "census failed: $(cat "$TMP/sa.err")"
"$HEAPINJECT" census -p "$TPID" -q >"$TMP/sa.txt" 2>&1 || fail "text census failed"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
python3 - "$TMP/sa.json" <<'PY' || fail "no group names its since-attach stack"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
named = [s for s in c["sizes"] if s.get("since_attach_stack")]
assert named, [(s["size"], s["since_attach_bytes"]) for s in c["sizes"][:10]]
assert any(n["since_attach_stack"].split(" < ")[0] in ("churn_alloc", "leak_in_burst") for n in named), \
    [n["since_attach_stack"] for n in named[:5]]
assert all(n["since_attach_bytes"] > 0 for n in named)
print("%d size groups name their stack, e.g. %s" % (len(named), named[0]["since_attach_stack"]))
PY
grep -q "since attach mostly (~.*) from \(churn_alloc\|leak_in_burst\)" "$TMP/sa.txt" ||
    fail "the text census names no since-attach stack: $(grep -m3 'since attach' "$TMP/sa.txt")"
assert_alive "$TPID"
ok "census joined with sampling: size groups say how much came since attach and from which stack"
