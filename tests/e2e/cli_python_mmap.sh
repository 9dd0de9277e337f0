#!/usr/bin/env bash
# cli_python_mmap: Debian's python3 (issue 14's two python cases), attached
# with the real cli. (1) ctypes: after attach the script looks up
# libc.malloc (dlsym on ctypes' dlopen handle) and leaks 50 MiB through it:
# the leak is found as kind malloc under libffi/_ctypes frames, within 20%
# of the truth. (2) small objects: the script keeps a million small tuples;
# pymalloc's arenas come from mmap, not malloc: they show as kind mmap with
# stacks that start in the python3 binary (obmalloc), within 20% of what
# pymalloc itself counts (sys._debugmallocstats). The script runs on after
# detach.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { "$ROOT/scripts/deps.sh" python3 >/dev/null 2>&1 || skip "no /usr/bin/python3"; }

TIN="$TMP/py.in"; TOUT="$TMP/py.out"
mkfifo "$TIN"
sleep 100000 >"$TIN" &
PIDS+=("$!")
"$PY" "$ROOT/tests/targets/py_mem.py" <"$TIN" >"$TOUT" 2>"$TMP/py.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TOUT" '^ready' 20 || fail "python did not start: $(cat "$TMP/py.err")"
cmd() { # cmd 'COMMAND' PATTERN: sends, waits for a new matching line, prints it
    local before; before=$(wc -l <"$TOUT")
    echo "$1" >"$TIN"
    for _ in $(seq 1 1200); do
        tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2" && return 0
        alive "$TPID" || fail "python died during '$1': $(tail -3 "$TMP/py.err")"
        sleep 0.05
    done
    fail "no '$2' after '$1'"
}

"$HEAPINJECT" attach -p "$TPID" --rate 256K >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
leaked=$(cmd 'ctypes 200 256' '^done leaked=')
leaked=${leaked#done leaked=}
arenas=$(cmd 'grow 1000000' '^done arenas=')
arenas=${arenas#done arenas=}
[ "$arenas" -gt $((32 << 20)) ] || fail "pymalloc grew by $arenas bytes only: nothing to find"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/s.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
"$HEAPINJECT" report "$TMP/s.json" -o "$TMP/s.txt" 2>>"$TMP/snap.err" || fail "report: $(cat "$TMP/snap.err")"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach.out" 2>&1 || fail "detach: $(cat "$TMP/detach.out")"

python3 - "$TMP/s.json" "$leaked" "$arenas" <<'PY' || fail "python checks failed (text report: $(head -40 "$TMP/s.txt"))"
import hi_profile, json, os, sys
d = hi_profile.load(sys.argv[1])
leaked, arenas = int(sys.argv[2]), int(sys.argv[3])
def base(m):
    return os.path.basename(m or "")
def through_ffi(s):
    return any("libffi" in base(f.get("module")) or "_ctypes" in base(f.get("module")) or
               f.get("function") == "ffi_call" for f in s["frames"])
ffi = sum(s["live_bytes"] for s in d["stacks"] if s["kind"] == "malloc" and through_ffi(s))
py_maps = [s for s in d["stacks"] if s["kind"] == "mmap" and s["frames"] and
           base(s["frames"][0].get("module")).startswith("python3")]
arena_live = sum(s["live_bytes"] for s in py_maps)
print(f"ctypes leak: {ffi:.0f} live under libffi/_ctypes, truth {leaked}")
print(f"pymalloc arenas: {arena_live:.0f} live as mmap from python3 in {len(py_maps)} stacks, "
      f"pymalloc grew {arenas}; mmap total {d['mmap']['live_bytes']:.0f}")
ok = 0.8 * leaked <= ffi <= 1.2 * leaked
# arenas made before "grow" (the ctypes phase, the interpreter's own work)
# count too: a little above the growth is right
ok = ok and 0.8 * arenas <= arena_live <= 1.3 * arenas + (4 << 20)
sys.exit(0 if ok else 1)
PY
cmd 'ctypes 4 64' '^done leaked=' >/dev/null
assert_alive "$TPID"
grep -q '\[mmap\] live' "$TMP/s.txt" || fail "text: no [mmap] stack"
ok "ctypes leak found through dlsym, pymalloc arenas found as mmap"
