#!/usr/bin/env bash
# cli_mmap: direct mmap as a family of its own and dlsym'd malloc (issue 14),
# Covers: payload/interpose/hooks_dlsym.c, payload/interpose/hooks_mmap.c, payload/sys/procmaps.c
# on a C program (tests/targets/cli_mmap.c) attached with the real cli.
# After attach the program maps anonymous memory in map_regions, maps a
# file (memfd, not counted), and mallocs through a pointer from
# dlsym(dlopen("libc.so.6"), "malloc"). The snapshot shows a stack of kind
# "mmap" through map_regions with the live bytes the program reports
# (within 15%), the dlsym'd mallocs under dl_leak as kind "malloc", no
# mapped bytes for the file; munmap of half of every region halves the
# live bytes, mremap moves them to remap_regions, munmap of all leaves 0.
# Text marks [mmap], collapsed ends those stacks in [mmap], pprof labels
# kind=mmap and reads back. Detach puts mmap, munmap and dlsym back in the
# program's GOT (the program prints what its GOT holds).
# Covers: payload/interpose/hooks_mmap.c, payload/interpose/hooks_dlsym.c
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/e2e/payload_lib.bash"

pl_start cli_mmap
ptrs() { pl_cmd ptrs '^done got_'; }
same() { # same LINE NAME: got_NAME == real_NAME
    local g r
    g=$(sed -n "s/.*got_$2=\([^ ]*\).*/\1/p" <<<"$1")
    r=$(sed -n "s/.*real_$2=\([^ ]*\).*/\1/p" <<<"$1")
    [ -n "$g" ] && [ "$g" = "$r" ]
}
before=$(ptrs)
for f in mmap munmap dlsym; do same "$before" $f || fail "before attach, $f is not the real one: $before"; done

"$HEAPINJECT" attach -p "$TPID" --rate 64K >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
during=$(ptrs)
for f in mmap munmap dlsym; do same "$during" $f && fail "after attach, $f is not hooked: $during"; done

truth=$(pl_cmd 'map 24 2048' '^done live=') # 48 MiB in 2 MiB regions
truth=$(pl_cmd 'map 400 64' '^done live=')  # and 25 MiB in 64 KiB ones
truth=${truth#done live=}
pl_cmd 'file 32' '^done file=' >/dev/null
leaked=$(pl_cmd 'dlmalloc 64 256' '^done leaked=')
leaked=${leaked#done leaked=}
[ "$leaked" -gt 0 ] || fail "dlsym'd malloc failed in the target"

snap() { # snap NAME [ARGS...]
    local n=$1; shift
    "$HEAPINJECT" snapshot -p "$TPID" "$@" -o "$TMP/$n" 2>>"$TMP/snap.err" || fail "snapshot $*: $(cat "$TMP/snap.err")"
}
snap s1.json --format json
# the other formats from the saved profile (the machine is shared: one
# snapshot fewer each), and pprof read back
rep() { # rep IN OUT [ARGS...]
    local in=$1 o=$2; shift 2
    "$HEAPINJECT" report "$TMP/$in" "$@" -o "$TMP/$o" 2>"$TMP/rep.err" || fail "report $in $*: $(cat "$TMP/rep.err")"
}
rep s1.json s1.txt
rep s1.json s1.folded --format collapsed
rep s1.json s1.pb.gz --format pprof
rep s1.pb.gz s1back.json --format json

# check FILE FUNCTION KIND LO HI [all]: the live bytes of kind KIND of the
# stacks through FUNCTION are within [LO, HI]; with "all", those of the
# whole kind too (nothing else counted: not the file mapping).
check() {
    python3 - "$@" <<'PY' || fail "check $*"
import hi_profile, json, sys
path, fn, kind, lo, hi = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
whole = len(sys.argv) > 6
d = hi_profile.load(path)
live = sum(s["live_bytes"] for s in d["stacks"]
           if s.get("kind", "malloc") == kind and any(f.get("function") == fn for f in s["frames"]))
allk = sum(s["live_bytes"] for s in d["stacks"] if s.get("kind", "malloc") == kind)
print(f"{path.rsplit('/',1)[-1]}: {kind} live through {fn}: {live:.0f} (want {lo:.0f}..{hi:.0f}); all {kind}: {allk:.0f}")
ok = lo <= live <= hi
if kind == "mmap" and d.get("mmap") is not None:
    ok = ok and abs(d["mmap"]["live_bytes"] - allk) <= 1 + 1e-6 * allk
if whole:
    ok = ok and allk <= hi  # no mapped file, no other mmap counted
sys.exit(0 if ok else 1)
PY
}
check "$TMP/s1.json" map_regions mmap "$(bc <<<"$truth*0.85")" "$(bc <<<"$truth*1.15")" all
check "$TMP/s1.json" dl_leak malloc "$(bc <<<"$leaked*0.85")" "$(bc <<<"$leaked*1.15")"
check "$TMP/s1back.json" map_regions mmap "$(bc <<<"$truth*0.85")" "$(bc <<<"$truth*1.15")"
python3 - "$TMP/s1.json" <<'PY' || fail "json: no exact mmap counts"
import hi_profile, json, sys
m = hi_profile.load(sys.argv[1])["mmap"]
assert m["map_calls"] >= 424 and m["map_bytes"] >= 48 << 20, m
PY
grep -q '^  mmap live ' "$TMP/s1.txt" || fail "text: no 'mmap live' line: $(head -12 "$TMP/s1.txt")"
grep -q '\[mmap\] live' "$TMP/s1.txt" || fail "text: no stack marked [mmap]"
grep -q 'map_regions;\[mmap\] [0-9]' "$TMP/s1.folded" || fail "collapsed: no stack ending map_regions;[mmap]: $(cat "$TMP/s1.folded")"
grep -q 'dl_leak [0-9]' "$TMP/s1.folded" || fail "collapsed: no dl_leak stack"

half=$(pl_cmd unmap_half '^done live=')
half=${half#done live=}
snap s2.json --format json
check "$TMP/s2.json" map_regions mmap "$(bc <<<"$half*0.85")" "$(bc <<<"$half*1.15")"

moved=$(pl_cmd 'remap 128' '^done live=') # every region to 128 KiB
moved=${moved#done live=}
snap s3.json --format json
check "$TMP/s3.json" remap_regions mmap "$(bc <<<"$moved*0.85")" "$(bc <<<"$moved*1.15")"
check "$TMP/s3.json" map_regions mmap 0 "$(bc <<<"$moved*0.01")"

pl_cmd unmap '^done live=0' >/dev/null
snap s4.json --format json
check "$TMP/s4.json" remap_regions mmap 0 1048576

"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach.out" 2>&1 || fail "detach: $(cat "$TMP/detach.out")"
after=$(ptrs)
for f in mmap munmap dlsym; do same "$after" $f || fail "after detach, $f is not the real one again: $after"; done
pl_cmd 'map 4 1024' '^done live=' >/dev/null
assert_alive "$TPID"
ok "mmap kind found with its stack and live bytes, munmap/mremap followed, dlsym'd malloc sampled, slots restored"
