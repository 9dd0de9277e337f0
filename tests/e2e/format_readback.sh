#!/usr/bin/env bash
# format_readback: saved profiles read back. Two snapshots of one attached
# Covers: cli/report/read_pprof.c
# session (JSON, then pprof); `heapinject diff` of the two shows what grew in
# between, leak_steady first; `heapinject report` turns each into other
# formats; a corrupt, truncated or foreign file is refused with exit 9 and
# "not a heapinject profile (...)".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

start_leaky
"$HEAPINJECT" attach -p "$TPID" --rate 64K -q >"$TMP/attach.out" 2>&1 || fail "attach failed: $(cat "$TMP/attach.out")"
detach() { "$HEAPINJECT" detach -p "$TPID" -q >/dev/null 2>&1; }
trap 'detach; cleanup' EXIT
sleep 1
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/a.json" -q || fail "first snapshot failed"
sleep 2
"$HEAPINJECT" snapshot -p "$TPID" --format pprof -o "$TMP/b.pb.gz" -q || fail "second snapshot failed"
"$HEAPINJECT" snapshot -p "$TPID" --format heap -o "$TMP/b.heap" -q || fail "heap snapshot failed"
detach
assert_alive "$TPID"

# What grew between the snapshots: the leak (about 4 MB/s for 2 s).
"$HEAPINJECT" diff "$TMP/a.json" "$TMP/b.pb.gz" --format collapsed >"$TMP/diff.folded" 2>"$TMP/diff.err" ||
    fail "diff failed: $(cat "$TMP/diff.err")"
cat "$TMP/diff.folded"
largest=$(largest_folded "$TMP/diff.folded")
case "$largest" in
    *";$LEAK_FN "[0-9]*) ;;
    *) fail "diff: largest growth is not $LEAK_FN: $largest" ;;
esac
grew=${largest##* }
[ "$grew" -gt 2000000 ] && [ "$grew" -lt 40000000 ] || fail "diff: $LEAK_FN grew by $grew bytes in about 2 s at 4 MB/s"
ok "diff JSON -> pprof: $LEAK_FN grew by $grew bytes"
"$HEAPINJECT" diff "$TMP/a.json" "$TMP/b.heap" --format json -o "$TMP/diff.json" 2>"$TMP/diff2.err" ||
    fail "diff with heap text failed: $(cat "$TMP/diff2.err")"
python3 - "$TMP/diff.json" "$LEAK_FN" <<'PY' || fail "diff JSON check failed"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
top = d["stacks"][0]
assert top["frames"][0]["function"] == sys.argv[2], top["frames"][0]
assert top["live_bytes"] > 0
print("diff JSON -> heap: top", top["frames"][0]["function"], top["live_bytes"])
PY

# Conversions of each saved file.
for f in a.json b.pb.gz b.heap; do
    for fmt in collapsed heap pprof massif; do
        "$HEAPINJECT" report "$TMP/$f" --format "$fmt" -o "$TMP/$f.$fmt" 2>"$TMP/conv.err" ||
            fail "report $f --format $fmt failed: $(cat "$TMP/conv.err")"
    done
    case "$(largest_folded "$TMP/$f.collapsed")" in
        *";$LEAK_FN "[0-9]*) ;;
        *) fail "report $f: largest stack is not $LEAK_FN" ;;
    esac
    # Each conversion reads back.
    "$HEAPINJECT" report "$TMP/$f.pprof" --format collapsed >/dev/null 2>&1 || fail "pprof written from $f does not read back"
    "$HEAPINJECT" report "$TMP/$f.heap" --format collapsed >/dev/null 2>&1 || fail "heap written from $f does not read back"
    ok "report $f: collapsed, heap, pprof, massif; written files read back"
done

# Files that are not profiles.
bad_file() {
    local what=$1 file=$2
    "$HEAPINJECT" report "$file" >"$TMP/bad.out" 2>"$TMP/bad.err"
    local rc=$?
    [ $rc -eq 9 ] || fail "$what: exit $rc, want 9: $(cat "$TMP/bad.err")"
    grep -q "report.*: $file: not a heapinject profile (.*)" "$TMP/bad.err" || fail "$what: message: $(cat "$TMP/bad.err")"
    ok "$what refused: $(cat "$TMP/bad.err")"
}
head -c 300 "$TMP/b.pb.gz" >"$TMP/cut.pb.gz"
bad_file "truncated pprof" "$TMP/cut.pb.gz"
head -c 2000 "$TMP/a.json" >"$TMP/cut.json"
bad_file "truncated JSON" "$TMP/cut.json"
head -c "$(( $(wc -c <"$TMP/b.pb.gz") / 2 ))" /dev/urandom >"$TMP/noise"
printf '\x1f\x8b' | cat - "$TMP/noise" >"$TMP/noise.gz"
bad_file "random gzip" "$TMP/noise.gz"
bad_file "collapsed stacks" "$TMP/b.heap.collapsed"
cp "$LEAKY" "$TMP/program"
bad_file "an executable" "$TMP/program"
