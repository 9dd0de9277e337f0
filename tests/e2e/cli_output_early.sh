#!/usr/bin/env bash
# cli_output_early: every file a command will write is checked before it
# attaches: -o into a missing directory, -o naming a directory, a read-only
# filesystem, a directory the user cannot write, the numbered files of
# --dump-every, census -o and snapshot -o. Each fails at once (not after
# --duration) with the real reason and exit status 2, and the target is
# never touched: no libheapinject in its maps, not traced. A path that can
# be written still works.
. "$(dirname "$0")/lib.sh"

start_target cli_leaky --steady 1000000

# refused WHAT REASON ARGS...: heapinject ARGS (run by ${RUN_AS[@]}) exits
# 2 within 2 s (the session asked for 30), saying REASON, and the target was
# not attached.
RUN_AS=()
refused() {
    local what=$1 reason=$2; shift 2
    local t0 t1 rc
    t0=$(date +%s.%N)
    "${RUN_AS[@]}" "$HEAPINJECT" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?
    t1=$(date +%s.%N)
    echo "$what: rc=$rc $(cat "$TMP/err")"
    [ "$rc" -eq 2 ] || fail "$what: exit status $rc, want 2"
    grep -q -- "$reason" "$TMP/err" || fail "$what: the message does not say '$reason'"
    awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 2) }' || fail "$what: took $(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}') s"
    grep -q libheapinject "/proc/$TPID/maps" && fail "$what: the target was attached before the check"
    assert_not_traced "$TPID"
    assert_alive "$TPID"
    ok "$what"
}

refused "missing directory" "No such file or directory" -p "$TPID" --duration 30 -o "$TMP/no/such/dir/x.json"
refused "a directory" "is a directory" -p "$TPID" --duration 30 -o "$TMP"
refused "an empty name" "No such file or directory" -p "$TPID" --duration 30 -o ""
ln -s "$TMP/no/such/dir/x.json" "$TMP/dangling"
refused "dangling symlink into a missing directory" "No such file or directory" -p "$TPID" --duration 30 -o "$TMP/dangling"
refused "census -o into a missing directory" "No such file or directory" census -p "$TPID" -o "$TMP/no/c.json"
refused "snapshot -o into a missing directory" "No such file or directory" snapshot -p "$TPID" -o "$TMP/no/s.json"
refused "report -o naming a directory" "is a directory" report /dev/null -o "$TMP"

# A directory an ordinary user cannot write (as that user: root writes anywhere).
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
    mkdir "$TMP/rootonly" && chmod 755 "$TMP/rootonly" && chmod 755 "$TMP"
    RUN_AS=(setpriv --reuid=65534 --regid=65534 --clear-groups)
    refused "a directory the user cannot write" "Permission denied" -p "$TPID" --duration 30 -o "$TMP/rootonly/x.json"
    RUN_AS=()
fi

# A read-only filesystem, and a --dump-every series that cannot be written
# although -o FILE can: FILE is a link out of the read-only directory, the
# numbered files go beside the link.
mkdir "$TMP/ro" "$TMP/rw"
trap 'umount "$TMP/ro" 2>/dev/null; cleanup' EXIT
if mount -t tmpfs -o size=64k tmpfs "$TMP/ro" 2>/dev/null; then
    ln -s "$TMP/rw/d.json" "$TMP/ro/d.json"
    if mount -o remount,ro "$TMP/ro"; then
        refused "read-only filesystem" "Read-only file system" -p "$TPID" --duration 30 -o "$TMP/ro/x.json"
        refused "--dump-every series on a read-only filesystem" "Read-only file system" \
            -p "$TPID" --duration 30 --dump-every 1M --format json -o "$TMP/ro/d.json"
        grep -q "d.0001.json" "$TMP/err" || fail "the message does not name the series file"
        grep -q "numbered files" "$TMP/err" || fail "the message does not say where the name comes from"
    fi
    umount "$TMP/ro"
else
    echo "no mount permitted: read-only cases not run"
fi

# What can be written still is, once the session has run.
(cd "$TMP/rw" && "$HEAPINJECT" -p "$TPID" --duration 1 --format json -o rel.json 2>"$TMP/err") ||
    fail "a relative -o in a writable directory: $(cat "$TMP/err")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/rw/rel.json" || fail "rel.json is not whole"
ls "$TMP/rw" | grep -q tmp && fail "a temporary file was left: $(ls "$TMP/rw")"
assert_alive "$TPID"
ok "a writable -o is written"
