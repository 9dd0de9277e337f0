#!/usr/bin/env bash
# cli_output_mode: reports carry the process's maps, paths and command line,
# Covers: cli/cmd/output.c
# so the files heapinject writes are 0600 (whatever the umask) unless
# --mode says otherwise, for every command that writes one (the one-shot
# session and its --dump-every files, snapshot, report, diff, census); an
# existing 0644 report replaced is 0600 too; a fifo written through keeps
# its own mode; a bad --mode is a usage error (2); --help tells.
. "$(dirname "$0")/lib.sh"

mode_is() { # FILE MODE WHAT
    local m; m=$(stat -c %a "$1")
    [ "$m" = "$2" ] || fail "$3: mode $m, want $2"
    ok "$3: $2"
}

start_target cli_leaky --steady 4000000
(umask 022 && "$HEAPINJECT" -p "$TPID" --duration 2 -q --format json --dump-every 4M -o "$TMP/s.json") ||
    fail "session failed"
mode_is "$TMP/s.json" 600 "session -o, umask 022"
mode_is "$TMP/s.0001.json" 600 "--dump-every file"
(umask 077 && "$HEAPINJECT" -p "$TPID" --duration 0.5 -q --mode 0644 -o "$TMP/s644.txt") || fail "session --mode failed"
mode_is "$TMP/s644.txt" 644 "session --mode 0644, umask 077"

echo old >"$TMP/r.txt"; chmod 644 "$TMP/r.txt"
"$HEAPINJECT" report "$TMP/s.json" -o "$TMP/r.txt" || fail "report failed"
mode_is "$TMP/r.txt" 600 "report replacing a 0644 file"
"$HEAPINJECT" report "$TMP/s.json" --mode 640 -o "$TMP/r640.txt" || fail "report --mode failed"
mode_is "$TMP/r640.txt" 640 "report --mode 640"
"$HEAPINJECT" diff "$TMP/s.0001.json" "$TMP/s.json" --mode 604 -o "$TMP/d.txt" || fail "diff --mode failed"
mode_is "$TMP/d.txt" 604 "diff --mode 604"

"$HEAPINJECT" attach -p "$TPID" >/dev/null 2>&1 || fail "attach failed"
"$HEAPINJECT" snapshot -p "$TPID" -q -o "$TMP/snap.txt" || fail "snapshot failed"
mode_is "$TMP/snap.txt" 600 "snapshot -o"
"$HEAPINJECT" snapshot -p "$TPID" -q --mode 0444 -o "$TMP/snap444.txt" || fail "snapshot --mode failed"
mode_is "$TMP/snap444.txt" 444 "snapshot --mode 0444"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1

if "$HEAPINJECT" census -p "$TPID" -q -o "$TMP/c.txt" 2>"$TMP/err"; then
    mode_is "$TMP/c.txt" 600 "census -o"
    "$HEAPINJECT" census -p "$TPID" -q --mode 0640 -o "$TMP/c640.txt" 2>"$TMP/err" || fail "census --mode: $(cat "$TMP/err")"
    mode_is "$TMP/c640.txt" 640 "census --mode 0640"
else
    echo "census not available here: $(cat "$TMP/err")"
fi

# Written through, not replaced: a fifo keeps its mode.
mkfifo -m 644 "$TMP/fifo"
cat "$TMP/fifo" >/dev/null &
"$HEAPINJECT" report "$TMP/s.json" -o "$TMP/fifo" || fail "report to a fifo failed"
wait $!
mode_is "$TMP/fifo" 644 "a fifo written through"

for bad in 999 1777 abc 0x1ff ""; do
    "$HEAPINJECT" report "$TMP/s.json" --mode "$bad" -o "$TMP/bad.txt" 2>"$TMP/err"; rc=$?
    [ "$rc" -eq 2 ] || fail "--mode '$bad': exit $rc, want 2"
    grep -q -- "--mode" "$TMP/err" || fail "--mode '$bad': the message does not name --mode: $(cat "$TMP/err")"
    [ ! -e "$TMP/bad.txt" ] || fail "--mode '$bad': a file was written"
done
ok "bad --mode values refused (2)"
"$HEAPINJECT" --help | grep -q -- "--mode OCTAL" || fail "--help does not mention --mode"
"$HEAPINJECT" census --help | grep -q -- "--mode OCTAL" || fail "census --help does not mention --mode"
assert_alive "$TPID"
