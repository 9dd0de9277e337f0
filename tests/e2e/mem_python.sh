#!/usr/bin/env bash
# mem_python: python3 growing small objects (pymalloc arenas: anonymous
# mmaps, not malloc calls). During the session RSS grows by tens of MiB
# while the sampled live heap explains little of it: the report says so
# with the numbers, names CPython's pymalloc and PYTHONMALLOC=malloc, and
# the growth is under "mmap", not hidden, and the arenas' mappings are
# sampled as stacks of kind mmap.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"
PY=/usr/bin/python3
[ -x "$PY" ] || { "$ROOT/scripts/deps.sh" python3 >/dev/null 2>&1 || skip "no /usr/bin/python3"; }

# ~25 MiB/s of small tuples for up to 16 s, then it holds them.
"$PY" -c '
import sys, time
keep = []
print("ready", flush=True)
t0 = time.time()
while time.time() - t0 < 16 and len(keep) < 6_000_000:
    keep.extend((i, i + 1) for i in range(20000))
    time.sleep(0.05)
time.sleep(600)
' >"$TMP/py.out" 2>"$TMP/py.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/py.out" ready 20 || fail "python did not start: $(cat "$TMP/py.err")"
sleep 1
"$HEAPINJECT" -p "$TPID" --duration 4 --format json -o "$TMP/out.json" 2>"$TMP/cli.err" || fail "heapinject -p: $(cat "$TMP/cli.err")"
check_memory "$TMP/out.json" memory 0 allocator=glibc || fail "breakdown"
python3 - "$TMP/out.json" <<'PY' || fail "no honest note about pymalloc"
import json, sys
d = json.load(open(sys.argv[1]))
m = d["memory"]
notes = " | ".join(m["notes"])
print(notes)
assert "RSS grew by" in notes and "explains" in notes, notes
assert "pymalloc" in notes and "PYTHONMALLOC=malloc" in notes, notes
ticks = [t["rss_bytes"] for t in d["ticks"] if t["rss_bytes"]]
grew = m["rss_bytes"] - ticks[0]
assert grew > 30 * 2**20, f"RSS grew only {grew}"
assert m["parts"]["mmap"] > grew, m["parts"]
assert any(s.get("kind") == "mmap" and s["live_bytes"] > 0 for s in d["stacks"]), "no live stack of kind mmap"
PY
assert_alive "$TPID"
ok "pymalloc growth explained"
