#!/usr/bin/env bash
# cli_python_ctypes_late: Debian's python3 attached first, then it imports
# ctypes (its _ctypes.so and libffi are loaded after attach) and allocates
# 64 MiB through malloc found by dlsym through _ctypes.so's slot, in 1024
# blocks of 64 KiB that it fills and keeps: half through a lookup made the
# moment _ctypes is loaded (_ctypes.dlsym: no scan of the agent comes in
# between), half through ctypes.CDLL("libc.so.6").malloc. The profile shows >= 80%
# of it under _ctypes/libffi frames (issue 26: 0 of 84 MiB, as _ctypes.so's
# dlsym slot was patched at the agent's next scan, after the lookup). The
# blocks read back intact and python runs on after detach.
# Covers: payload/interpose/hooks_dlsym.c
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || { "$ROOT/scripts/deps.sh" python3 >/dev/null 2>&1 || skip "no /usr/bin/python3"; }

cat >"$TMP/late.py" <<'PYEOF'
import sys
assert "ctypes" not in sys.modules and "_ctypes" not in sys.modules
print("ready", flush=True)
keep = []
for line in sys.stdin:
    if line.startswith("go"):
        # The lookup right after the load (microseconds: before any scan
        # of the agent could patch _ctypes.so), then ctypes' usual way.
        import _ctypes
        first = _ctypes.dlsym(_ctypes.dlopen("libc.so.6", 2), "malloc")
        import ctypes
        early = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_size_t)(first)
        libc = ctypes.CDLL("libc.so.6")
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        for i in range(1024):
            p = (early if i % 2 else libc.malloc)(65536)
            ctypes.memset(p, 0x41 + i % 26, 65536)
            keep.append(p)
        print("done bytes=%d" % (1024 * 65536), flush=True)
    elif line.startswith("verify"):
        import ctypes
        bad = sum(1 for i, p in enumerate(keep) if ctypes.string_at(p, 65536) != bytes([0x41 + i % 26]) * 65536)
        print("verify %s" % ("ok" if bad == 0 else "BAD %d" % bad), flush=True)
PYEOF
mkfifo "$TMP/in"
sleep 100000 >"$TMP/in" &
PIDS+=("$!")
"$PY" "$TMP/late.py" <"$TMP/in" >"$TMP/out" 2>"$TMP/py.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/out" '^ready' 20 || fail "python did not start: $(cat "$TMP/py.err")"
"$HEAPINJECT" attach -p "$TPID" --rate 64K -q 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
grep -q '_ctypes' "/proc/$TPID/maps" && fail "_ctypes is loaded before the test imports it"
echo go >"$TMP/in"
wait_for_line "$TMP/out" '^done' 60 || fail "python did not allocate: $(cat "$TMP/py.err")"
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/s.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach failed"
python3 - "$TMP/s.json" <<'PY' || fail "the 64 MiB from libc.malloc looked up after a late import ctypes is not in the profile"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
def ctypes_frame(f):
    m = (f.get("module") or "").rsplit("/", 1)[-1]
    return m.startswith("_ctypes") or m.startswith("libffi")
seen = sum(s.get("live_bytes", 0) for s in d["stacks"] if any(ctypes_frame(f) for f in s["frames"]))
truth = 1024 * 65536
print("under _ctypes/libffi frames: %.1f MiB of %.1f MiB" % (seen / 2**20, truth / 2**20))
sys.exit(0 if seen >= 0.8 * truth else 1)
PY
echo verify >"$TMP/in"
wait_for_line "$TMP/out" '^verify' 30 || fail "python did not verify"
grep -q '^verify ok' "$TMP/out" || fail "python's blocks damaged: $(grep verify "$TMP/out")"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "python3: libc.malloc via ctypes imported after attach: seen under _ctypes/libffi frames; data intact"
