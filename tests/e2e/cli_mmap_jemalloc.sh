#!/usr/bin/env bash
# cli_mmap_jemalloc: the maps an allocator makes for its own heap are the
# allocator's, not the program's (issue 14). tests/targets/cli_mmap runs
# with jemalloc preloaded: jemalloc maps its extents through its own GOT
# slot of mmap, which is never hooked (libjemalloc defines malloc). After
# attach the program maps 16 MiB itself and mallocs 64 MiB in 4 MiB blocks
# (jemalloc maps extents for them): kind mmap holds the program's 16 MiB
# under map_regions and nothing under jemalloc; the 64 MiB are kind malloc
# under plain_leak, counted once.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/e2e/payload_lib.bash"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e "$JE" ] || { "$ROOT/scripts/deps.sh" >/dev/null 2>&1; [ -e "$JE" ] || skip "no $JE (libjemalloc2)"; }

LD_PRELOAD=$JE pl_start cli_mmap
grep -q libjemalloc "/proc/$TPID/maps" || fail "jemalloc is not loaded in the target"
"$HEAPINJECT" attach -p "$TPID" --rate 64K >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
mapped=$(pl_cmd 'map 8 2048' '^done live=')
mapped=${mapped#done live=}
leaked=$(pl_cmd 'malloc 16 4096' '^done leaked=')
leaked=${leaked#done leaked=}
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/s.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach.out" 2>&1 || fail "detach: $(cat "$TMP/detach.out")"
python3 - "$TMP/s.json" "$mapped" "$leaked" <<'PY' || fail "jemalloc checks failed"
import hi_profile, json, os, sys
d = hi_profile.load(sys.argv[1])
mapped, leaked = int(sys.argv[2]), int(sys.argv[3])
def has(s, fn):
    return any(f.get("function") == fn for f in s["frames"])
def in_je(s):
    return any("jemalloc" in os.path.basename(f.get("module") or "") for f in s["frames"])
mm = [s for s in d["stacks"] if s["kind"] == "mmap"]
prog = sum(s["live_bytes"] for s in mm if has(s, "map_regions"))
je = sum(s["live_bytes"] for s in mm if in_je(s))
allmm = sum(s["live_bytes"] for s in mm)
heap = sum(s["live_bytes"] for s in d["stacks"] if s["kind"] == "malloc" and has(s, "plain_leak"))
print(f"mmap: {prog:.0f} under map_regions (truth {mapped}), {je:.0f} under jemalloc, {allmm:.0f} in all; "
      f"malloc under plain_leak {heap:.0f} (truth {leaked})")
ok = 0.85 * mapped <= prog <= 1.15 * mapped and je == 0 and allmm <= 1.15 * mapped
ok = ok and 0.8 * leaked <= heap <= 1.2 * leaked
sys.exit(0 if ok else 1)
PY
assert_alive "$TPID"
ok "jemalloc's own maps are not counted as the program's; its blocks are counted once"
