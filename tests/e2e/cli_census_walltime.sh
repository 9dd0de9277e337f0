#!/usr/bin/env bash
# cli_census_walltime: a census does no work it does not print. Its wall
# time stays near the "in all" it prints, and it runs no dpkg-query (the
# debug-package hints are looked up only when a report prints them; a
# census prints none, and one dpkg-query a module took seconds).
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || skip "no strace"
start_target cli_leaky
t0=$(date +%s%N)
"$HEAPINJECT" census -p "$TPID" -q >"$TMP/census.txt" 2>"$TMP/census.err" || fail "census: $(cat "$TMP/census.err")"
wall_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
inall=$(grep -o '[0-9.]* ms in all' "$TMP/census.txt" | cut -d' ' -f1)
[ -n "$inall" ] || fail "no 'in all' in the census: $(head -5 "$TMP/census.txt")"
# The constant: the process start, attach and detach (tens of ms) and
# glibc's debug information, read once for the heap's layout and once by
# the symbolizer (0.2 s each here, unloaded); 1.5 s leaves room for a
# loaded machine. Before the fix each module's dpkg-query (two for libc,
# 0.5 s each unloaded) came on top: 3.0 s for 0.32 s in all.
python3 -c "import sys; w, a = float(sys.argv[1]), float(sys.argv[2]); sys.exit(0 if w <= 1.2 * a + 1500 else 1)" \
    "$wall_ms" "$inall" || fail "census took $wall_ms ms, it printed $inall ms in all"
echo "census: wall $wall_ms ms, in all $inall ms"

strace -f -e trace=execve -o "$TMP/execve.txt" "$HEAPINJECT" census -p "$TPID" -q >"$TMP/c2.txt" 2>&1 ||
    fail "census under strace: $(tail -3 "$TMP/c2.txt")"
grep -q "in all" "$TMP/c2.txt" || fail "census under strace printed no census"
grep -q dpkg-query "$TMP/execve.txt" && fail "the census ran dpkg-query: $(grep -c dpkg-query "$TMP/execve.txt") execve"
grep -qi "dbgsym\|install " "$TMP/c2.txt" && fail "the census printed a hint after all"
assert_alive "$TPID"
ok "census wall $wall_ms ms for $inall ms in all, no dpkg-query"
