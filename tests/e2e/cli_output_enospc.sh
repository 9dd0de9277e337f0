#!/usr/bin/env bash
# cli_output_enospc: a report that does not fit says why: "No space left on
# device" (the errno of the write that failed), not stdio's "Input/output
# error"; -o /dev/full, stdout on /dev/full, and a small full tmpfs, in text,
# json and pprof (gzip through the same stream). On the tmpfs nothing is
# left behind: no partial file, no temporary, the space is free again.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --steady 2000000
"$HEAPINJECT" -p "$TPID" --duration 1 --rate 4K --format json -o "$TMP/saved.json" 2>"$TMP/err" ||
    fail "profiling failed: $(cat "$TMP/err")"

# enospc WHAT STDOUT ARGS...: heapinject ARGS, its stdout on STDOUT, fails
# (1) saying ENOSPC's message.
enospc() {
    local what=$1 out=$2 rc; shift 2
    "$HEAPINJECT" "$@" >"$out" 2>"$TMP/err"; rc=$?
    echo "$what: rc=$rc $(cat "$TMP/err")"
    [ "$rc" -eq 1 ] || fail "$what: exit status $rc, want 1"
    grep -q "No space left on device" "$TMP/err" || fail "$what: the reason is not ENOSPC"
    grep -q "Input/output error" "$TMP/err" && fail "$what: says EIO"
    ok "$what"
}

enospc "report -o /dev/full" /dev/null report "$TMP/saved.json" -o /dev/full
enospc "report to stdout on /dev/full" /dev/full report "$TMP/saved.json"
enospc "pprof to stdout on /dev/full" /dev/full report "$TMP/saved.json" --format pprof
[ -c /dev/full ] || fail "/dev/full is not a device any more"

mkdir "$TMP/small"
mount -t tmpfs -o size=64k tmpfs "$TMP/small" 2>/dev/null || skip "cannot mount a tmpfs (not root, or no permission)"
trap 'umount "$TMP/small" 2>/dev/null; cleanup' EXIT
head -c 64K /dev/zero >"$TMP/small/fill" 2>/dev/null # up to full
before=$(df --output=used -B1 "$TMP/small" | tail -1)
enospc "session -o on a full tmpfs" /dev/null -p "$TPID" --duration 1 --rate 4K --format json -o "$TMP/small/x.json"
enospc "report -o on a full tmpfs (text)" /dev/null report "$TMP/saved.json" -o "$TMP/small/x.txt"
enospc "report -o on a full tmpfs (pprof)" /dev/null report "$TMP/saved.json" --format pprof -o "$TMP/small/x.pb.gz"
left=$(ls -A "$TMP/small" | grep -v '^fill$')
[ -z "$left" ] || fail "files left on the full tmpfs: $left"
after=$(df --output=used -B1 "$TMP/small" | tail -1)
[ "$after" -le "$before" ] || fail "the tmpfs holds $((after - before)) more bytes than before (an unnamed file kept?)"
assert_alive "$TPID"
ok "nothing left on the full tmpfs ($after bytes used, as before)"
