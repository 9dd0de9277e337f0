#!/bin/bash
# census_roots.sh - roots of kind "register" and "tls" (tests/targets/
# census_regs.c): a block whose address only a blocked thread's r12 holds
# is reachable, credited to that thread's registers; a block only a
# __thread variable holds is credited to that thread's thread-local
# storage; the 100 leaked control blocks are still unreachable. The
# block posix_memalign put in a mapping of its own is counted from its
# aligned start, at glibc's own usable size, held by its global. The
# threads are held only for the fork: afterwards no thread is traced or
# stopped, and the target's own checks of both blocks pass.
. "$(dirname "$0")/lib.sh"

jq_() { python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['census']; print(eval(sys.argv[2]))" "$@"; }

mkfifo "$TMP/in"
exec 3<>"$TMP/in"
"$TARGETS/census_regs" <"$TMP/in" >"$TMP/census_regs.out" 2>"$TMP/census_regs.err" &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/census_regs.out" ready 10 || fail "census_regs did not start: $(cat "$TMP/census_regs.err")"

"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census failed: $(cat "$TMP/c.err")"
cat "$TMP/c.err"
assert_threads_untraced "$TPID"
root() { # root KIND THREAD FIELD: the field of that thread's root of that kind (0 if none)
    jq_ "$TMP/c.json" "sum(r['$3'] for r in d['roots'] if r['kind'] == '$1' and r.get('thread') == '$2')"
}
reg=$(root register regholder retained_bytes)
tls=$(root tls tlsholder retained_bytes)
lost=$(jq_ "$TMP/c.json" "d['unreachable']['bytes']")
lostb=$(jq_ "$TMP/c.json" "d['unreachable']['blocks']")
echo "registers of regholder: $reg bytes; TLS of tlsholder: $tls bytes; unreachable: $lost bytes in $lostb blocks;" \
    "threads held $(jq_ "$TMP/c.json" "d['threads_held_ms']") ms (fork $(jq_ "$TMP/c.json" "d['fork_ms']") ms)"
[ "$reg" -ge 24000 ] && [ "$reg" -lt 30000 ] ||
    fail "the block only r12 holds is not credited to regholder's registers ($reg bytes): $(jq_ "$TMP/c.json" "d['roots']")"
[ "$tls" -ge 12000 ] && [ "$tls" -lt 20000 ] ||
    fail "the block only a __thread variable holds is not credited to tlsholder's TLS ($tls bytes)"
[ "$lostb" = 100 ] || fail "$lostb blocks unreachable, wanted the 100 leaked ones: $(jq_ "$TMP/c.json" "d['unreachable']")"
[ "$(jq_ "$TMP/c.json" "d['threads_with_registers']")" = 3 ] || fail "registers of not all 3 threads read"
usable=$(sed -n 's/^aligned_usable=//p' "$TMP/census_regs.out")
[ -n "$usable" ] || fail "no aligned_usable line from the target"
[ "$(jq_ "$TMP/c.json" "[(s['blocks'], s['preview'][:16]) for s in d['sizes'] if s['size'] == $usable]")" = "[(1, '4141414141414141')]" ] ||
    fail "the posix_memalign'd block is not one block of $usable bytes starting with 'A': $(jq_ "$TMP/c.json" "[(s['size'], s['blocks'], s['preview'][:16]) for s in d['sizes'] if s['size'] > 1000000]")"
# (main's stack holds it too: then it is on a shared record naming g_aligned)
[ "$(jq_ "$TMP/c.json" "sum(r['retained_bytes'] for r in d['roots'] if r['name'].startswith('g_aligned ') or (r['kind'] == 'shared' and 'g_aligned (' in r['name']))")" = "$usable" ] ||
    fail "g_aligned does not retain the aligned block"
# glibc's layout from libc's debug information (libc6-dbg: scripts/deps.sh),
# main_arena where gdb says it is; without it (its directory hidden in a
# mount namespace of the cli's own), built-in offsets and the same heap
unset DEBUGINFOD_URLS
[ "$(jq_ "$TMP/c.json" "d['layout']['source']")" = debuginfo ] ||
    fail "libc's debug information was not used: $(jq_ "$TMP/c.json" "d['layout']")"
arena=$(gdb -q -batch -p "$TPID" -ex 'printf "main_arena=%lu\n", &main_arena' 2>/dev/null | sed -n 's/^main_arena=//p')
[ -n "$arena" ] && [ "$arena" = "$(jq_ "$TMP/c.json" "d['layout']['main_arena']")" ] ||
    fail "main_arena from the debug information ($(jq_ "$TMP/c.json" "d['layout']['main_arena']")) is not gdb's ($arena)"
inuse=$(jq_ "$TMP/c.json" "d['in_use']['blocks']")
if unshare -m true 2>/dev/null; then
    unshare -m sh -c "mount -t tmpfs none /usr/lib/debug && exec '$HEAPINJECT' census -q -p $TPID --format json" \
        >"$TMP/b.json" || fail "census without libc's debug information failed"
    [ "$(jq_ "$TMP/b.json" "d['layout']['source']")" = built-in ] || fail "debug information hidden, yet: $(jq_ "$TMP/b.json" "d['layout']")"
    jq_ "$TMP/b.json" "d['layout']['where']" | grep -q "apt-get install libc6-dbg" || fail "no hint to install libc6-dbg"
    # (each attach's dlopen of the payload leaves a few blocks of the loader's)
    b=$(jq_ "$TMP/b.json" "d['in_use']['blocks']")
    [ "$b" -ge "$inuse" ] && [ "$b" -le $((inuse + 40)) ] || fail "built-in layout finds $b blocks in use, not about $inuse"
    assert_threads_untraced "$TPID"
fi
# the text report names them, and says what it read
"$HEAPINJECT" census -q -p "$TPID" >"$TMP/c.txt" || fail "text census failed"
grep -q "registers of thread [0-9]* (regholder)" "$TMP/c.txt" || fail "text: no register root: $(cat "$TMP/c.txt")"
grep -q "thread-local storage of thread [0-9]* (tlsholder)" "$TMP/c.txt" || fail "text: no TLS root"
grep -Eq "stall [0-9.]+ ms \(threads held for their registers" "$TMP/c.txt" || fail "text: the hold is not reported"
assert_threads_untraced "$TPID"
assert_alive "$TPID"
echo go >&3
wait_for_line "$TMP/census_regs.out" verify 10 || fail "the target did not finish"
grep -q "verify ok" "$TMP/census_regs.out" || fail "the target's blocks were damaged"
ok "a block held only in r12 is reachable through its thread's registers, one held only in TLS through its TLS"
