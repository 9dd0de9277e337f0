#!/usr/bin/env bash
# cli_hostile_names: names that come from the target are its user's to
# choose. A library whose file name holds terminal escape sequences
# (ESC ] 0 ; ... BEL retitles a terminal window, ESC [ 31 m turns it red) is
# shown escaped (\x1b) in every text view, never raw; and a library replaced
# on disk by a FIFO after it was mapped (open(O_RDONLY) of a FIFO waits for
# a writer for ever) neither hangs the cli, running as root, nor the
# injector: the report is written and the library's frames are still named,
# from the mapped file itself (/proc/PID/map_files).
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the target"

ESC=$'\e' BEL=$'\a'
NAME="libhi${ESC}]0;PWNED${BEL}${ESC}[31mred.so"
LIBDIR="$TMP/libs"
mkdir -p "$LIBDIR"
build_hostile_lib "$LIBDIR/$NAME" -g
# The target: python loads the library by its hostile path and keeps
# allocating through it; between rounds it spins inside the library.
start_hostile_lib_target "$LIBDIR/$NAME"

# no_raw_escape FILE WHAT: FILE holds no ESC or BEL byte, and shows the
# escaped name.
no_raw_escape() {
    if grep -q "[$ESC$BEL]" "$1"; then fail "$2: a raw escape sequence reached the text: $(grep -n "[$ESC$BEL]" "$1" | cat -v | head -3)"; fi
    grep -qF 'libhi\x1b]0;PWNED\x07\x1b[31mred.so' "$1" || fail "$2: the escaped library name is missing: $(head -40 "$1" | cat -v)"
}

for by in module function; do
    timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --rate 64K --duration 1.5 --by "$by" >"$TMP/by_$by.txt" 2>"$TMP/by_$by.err" ||
        fail "--by $by failed: $(cat -v "$TMP/by_$by.err")"
    no_raw_escape "$TMP/by_$by.txt" "--by $by"
    ok "--by $by: the library's name is shown escaped"
done
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --rate 64K --duration 1.5 >"$TMP/plain.txt" 2>"$TMP/plain.err" ||
    fail "the one-shot report failed: $(cat -v "$TMP/plain.err")"
if grep -q "[$ESC$BEL]" "$TMP/plain.txt" "$TMP/plain.err"; then fail "a raw escape sequence reached the default report"; fi
grep -q 'hostile_keep' "$TMP/plain.txt" || fail "the report does not name hostile_keep: $(head -30 "$TMP/plain.txt" | cat -v)"
ok "default report: hostile_keep named, no raw escape"

# A FIFO is put over the library's path after it was mapped: a bind mount,
# so that the maps line still names the path, not "(deleted)". In a mount
# namespace of its own, with a target of its own: nothing outlives the test.
command -v unshare >/dev/null || skip "unshare (util-linux) is needed for the FIFO case"
cat >"$TMP/fifo_case.sh" <<SH
set -u
python3 "$ROOT/tests/e2e/hostile_lib_target.py" "$LIBDIR/$NAME" >"$TMP/t2.out" 2>"$TMP/t2.err" &
T=\$!
for _ in \$(seq 400); do grep -q ready "$TMP/t2.out" 2>/dev/null && break; sleep 0.05; done
mkfifo "$TMP/fifo" && mount --bind "$TMP/fifo" "$LIBDIR/$NAME" || { echo "cannot bind a FIFO over the library"; kill -9 \$T; exit 3; }
[ -p "$LIBDIR/$NAME" ] || { echo "the bind mount did not take"; kill -9 \$T; exit 3; }
start=\$(date +%s)
timeout -k 5 60 "$HEAPINJECT" -p \$T --rate 64K --duration 1.5 >"$TMP/fifo.txt" 2>"$TMP/fifo.err"
rc=\$?
echo "rc=\$rc secs=\$(( \$(date +%s) - start ))"
kill -0 \$T || echo "target died"
kill -9 \$T
exit 0
SH
unshare -m --propagation private bash "$TMP/fifo_case.sh" >"$TMP/fifo_case.out" 2>&1 || fail "the FIFO case did not run: $(cat "$TMP/fifo_case.out")"
res=$(grep -m1 "^rc=" "$TMP/fifo_case.out")
case "$res" in
rc=124* | rc=137*) fail "the cli hung on the FIFO put where the library was ($res)" ;;
rc=0*) ;;
*) fail "the session failed ($res): $(cat -v "$TMP/fifo.err" "$TMP/fifo_case.out")" ;;
esac
grep -q 'target died' "$TMP/fifo_case.out" && fail "the target died"
grep -q 'hostile_keep' "$TMP/fifo.txt" || fail "the library's frames were not named from the mapped file: $(head -30 "$TMP/fifo.txt" | cat -v)"
ok "a FIFO over the library's path: the session ended ($res), frames still named"
