#!/usr/bin/env bash
# cli_output_special: -o names what the user gave, and a report goes through
# it: a regular file is replaced whole (written beside it, then renamed), but
# a device (as root: a copy of /dev/null), a fifo or a symlink stays what it
# is. Renaming over them once replaced the machine's /dev/null with a file.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky
"$HEAPINJECT" -p "$TPID" --duration 1 --rate 16K --format json -o "$TMP/saved.json" 2>"$TMP/err" ||
    fail "profiling failed: $(cat "$TMP/err")"

# A regular file: replaced whole, no temporary left beside it.
echo old >"$TMP/plain.txt"
"$HEAPINJECT" report "$TMP/saved.json" -o "$TMP/plain.txt" 2>"$TMP/err" || fail "report to a file: $(cat "$TMP/err")"
grep -q churn_alloc "$TMP/plain.txt" || fail "the file does not hold the report"
ls "$TMP" | grep -q '\.tmp\.' && fail "a temporary file was left: $(ls "$TMP")"

# A symlink: still a link, its target holds the report.
echo old >"$TMP/real.txt"
ln -s real.txt "$TMP/link.txt"
"$HEAPINJECT" report "$TMP/saved.json" -o "$TMP/link.txt" 2>"$TMP/err" || fail "report to a symlink: $(cat "$TMP/err")"
[ -L "$TMP/link.txt" ] || fail "the symlink was replaced by a file"
grep -q churn_alloc "$TMP/real.txt" || fail "the symlink's target does not hold the report"

# A fifo: still a fifo, and its reader got the report.
mkfifo "$TMP/fifo"
cat "$TMP/fifo" >"$TMP/fifo.out" &
reader=$!
"$HEAPINJECT" report "$TMP/saved.json" -o "$TMP/fifo" 2>"$TMP/err" || fail "report to a fifo: $(cat "$TMP/err")"
wait "$reader"
[ -p "$TMP/fifo" ] || fail "the fifo was replaced"
grep -q churn_alloc "$TMP/fifo.out" || fail "the fifo's reader did not get the report"

# A descriptor the caller opened for appending (/dev/stdout, /dev/fd/N):
# written where it stands, nothing truncated, the file not replaced.
echo "first line" >"$TMP/log.txt"
"$HEAPINJECT" report "$TMP/saved.json" -o /dev/stdout >>"$TMP/log.txt" 2>"$TMP/err" || fail "-o /dev/stdout: $(cat "$TMP/err")"
"$HEAPINJECT" report "$TMP/saved.json" -o /dev/fd/3 3>>"$TMP/log.txt" 2>"$TMP/err" || fail "-o /dev/fd/3: $(cat "$TMP/err")"
[ "$(head -1 "$TMP/log.txt")" = "first line" ] || fail "-o /dev/stdout truncated what was there"
[ "$(grep -c churn_alloc "$TMP/log.txt")" -ge 2 ] || fail "the appended reports are not both there"

# A character device (a private copy of /dev/null, so a failure here
# cannot break the machine's own).
if [ "$(id -u)" -eq 0 ] && mknod -m 666 "$TMP/null" c 1 3 2>/dev/null; then
    "$HEAPINJECT" -p "$TPID" --duration 0.5 -q -o "$TMP/null" 2>"$TMP/err" || fail "report to a device: $(cat "$TMP/err")"
    [ -c "$TMP/null" ] || fail "the device was replaced by a $(stat -c %F "$TMP/null")"
fi
[ -c /dev/null ] || fail "/dev/null is not a device any more"
assert_alive "$TPID"
ok "-o writes through devices, fifos and symlinks, and replaces regular files whole"
