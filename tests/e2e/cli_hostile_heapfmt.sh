#!/bin/bash
# cli_hostile_heapfmt.sh - names the target's user chose, in --format heap
# (gperftools heap text; issue 25, item 9d). The format's only free text is
# MAPPED_LIBRARIES, the process's maps: files mapped under names holding
# terminal escapes (ESC ] 0 ; ... BEL, ESC [ 31 m) and a newline. Each
# mapping stays on one line of the section (the kernel writes the newline
# as \012) and no raw control byte reaches the file: ESC and BEL are
# written as the kernel writes the newline, \033 and \007. Before: ESC and
# BEL were written raw. The target checks its mappings and blocks after.
. "$(dirname "$0")/lib.sh"

ESC=$'\e' BEL=$'\a' NL=$'\n'
mkdir -p "$TMP/m"
TITLE="$TMP/m/map${ESC}]0;PWNED${BEL}${ESC}[31mred"
NEWLINE="$TMP/m/map${NL}00400000-00401000 r-xp 00000000 00:00 0 fake"
start_target cli_hostile_map "$TITLE" "$NEWLINE"
P=$TPID
"$HEAPINJECT" -p "$P" --rate 4K --duration 1 --format heap -o "$TMP/h.heap" 2>"$TMP/h.err" ||
    fail "session: exit $?: $(cat -v "$TMP/h.err")"
grep -q "^heap profile: " "$TMP/h.heap" || fail "not a heap profile: $(head -3 "$TMP/h.heap" | cat -v)"
if grep -q "[$ESC$BEL]" "$TMP/h.heap"; then
    fail "a raw control byte reached the heap profile: $(grep -an "[$ESC$BEL]" "$TMP/h.heap" | cat -v | head -3)"
fi
sect=$(sed -n '/^MAPPED_LIBRARIES:$/,$p' "$TMP/h.heap" | tail -n +2)
[ -n "$sect" ] || fail "no MAPPED_LIBRARIES section"
grep -qF 'map\033]0;PWNED\007\033[31mred' <<<"$sect" || fail "the escaped name is missing: $(grep -a 'm/map' <<<"$sect" | cat -v)"
grep -qF 'map\012' <<<"$sect" || fail "the newline's mapping is missing: $(grep -a 'm/map' <<<"$sect" | cat -v)"
# every line of the section is one mapping: a range, permissions, offset, device, inode
bad=$(grep -avcE '^[0-9a-f]+-[0-9a-f]+ [-r][-w][-x][-ps] [0-9a-f]+ [0-9a-f]+:[0-9a-f]+ [0-9]+' <<<"$sect")
[ "$bad" = 0 ] || fail "$bad lines of MAPPED_LIBRARIES are not mappings: $(grep -avE '^[0-9a-f]+-' <<<"$sect" | cat -v | head -3)"
grep -a "m/map" <<<"$sect" | cat -v
kill -USR1 "$P"
wait_for_line "$TMP/cli_hostile_map.out" "^verify" 10 || fail "the target did not verify"
grep -q "^verify ok" "$TMP/cli_hostile_map.out" || fail "$(cat "$TMP/cli_hostile_map.out")"
ok "--format heap: hostile mapping names escaped, one mapping per line, the target's data intact"
