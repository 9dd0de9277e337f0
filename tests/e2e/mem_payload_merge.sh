#!/usr/bin/env bash
# mem_payload_merge: the RSS split does not depend on where our own
# mappings land. A process holds 64 MiB in 1 MiB malloc blocks, each one
# mmapped by glibc; the payload dlopened into it lands right below them and
# the kernel merges its .bss with the blocks' mapping, which then no longer
# starts with a chunk header. `status` before attach, attached, after a
# census and after detach: the same heap (within 64 KiB), no mmap taken
# for the heap, no "not resident" note; the target's blocks are intact.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

start_mem_truth -- --inuse 0 --freed 0 --mmap 0 --big 64
status_json() {
    "$HEAPINJECT" status -p "$TPID" --format json >"$TMP/$1.json" 2>"$TMP/$1.err"
    local rc=$?
    [ "$rc" -eq 0 ] || [ "$rc" -eq 7 ] || fail "status ($1) exited $rc: $(cat "$TMP/$1.err")"
}
status_json before
"$HEAPINJECT" attach -p "$TPID" -q || fail "attach failed"
# The case this test is about: the payload's .bss and the blocks in one VMA.
python3 - "/proc/$TPID/maps" <<'PY' || fail "the payload's .bss did not merge with the blocks: $(grep -A1 libheapinject "/proc/$TPID/maps" | tail -2)"
import sys
lines = [l.split() for l in open(sys.argv[1])]
last = max(i for i, l in enumerate(lines) if l[-1].endswith("libheapinject.so"))
nxt = lines[last + 1]
lo, hi = (int(x, 16) for x in nxt[0].split("-"))
sys.exit(0 if len(nxt) == 5 and nxt[1] == "rw-p" and hi - lo > 32 * 2**20 else 1)
PY
status_json attached
"$HEAPINJECT" census -p "$TPID" >"$TMP/census.txt" 2>"$TMP/census.err" || fail "census: $(cat "$TMP/census.err")"
status_json census
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
status_json detached
python3 - "$TMP" <<'PY' || fail "the RSS split moved with our mappings"
import json, sys
MiB = 2**20
heap = {}
for name in ("before", "attached", "census", "detached"):
    m = json.load(open(f"{sys.argv[1]}/{name}.json"))["memory"]
    p = m["parts"]
    heap[name] = p["heap_in_use"] + p["heap_free"] + p.get("heap_unsplit", 0)
    print(name, {k: round(v / MiB, 2) for k, v in p.items()}, m["notes"])
    assert heap[name] > 63 * MiB, f"{name}: heap {heap[name] / MiB:.2f} MiB, the 64 MiB of blocks are elsewhere: {p}"
    assert p["mmap"] < 1 * MiB, f"{name}: mmap {p['mmap'] / MiB:.2f} MiB: blocks taken for foreign mappings"
    assert not any("not resident" in n for n in m["notes"]), f"{name}: {m['notes']}"
for name in ("attached", "census", "detached"):
    assert abs(heap[name] - heap["before"]) <= 64 * 1024, f"heap {name} {heap[name]} vs before {heap['before']}"
PY
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 30 || fail "the target did not verify its blocks"
grep -q "^verify ok 64" "$TMP/mem_truth.out" || fail "the target's blocks: $(grep verify "$TMP/mem_truth.out")"
assert_alive "$TPID"
ok "heap the same before attach, attached, after a census and after detach"
