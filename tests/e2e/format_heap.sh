#!/usr/bin/env bash
# format_heap: `--format heap` (gperftools heap profile text) read by
# google-pprof and jeprof (and go tool pprof when installed), sampled
# (heap_v2/RATE: the readers unbias) and unsampled (--rate 1: heapprofile);
# leak_steady is the top in-use entry of each reader, and `heapinject report`
# reads the file back and symbolizes it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader google-pprof google-perftools
need_reader jeprof libjemalloc-dev
start_leaky

snapshot "$TMP/v2.heap" --rate 64K --format heap
snapshot "$TMP/all.heap" --rate 1 --format heap
head -1 "$TMP/v2.heap" | grep -q '^heap profile: *[0-9]*: *[0-9]* \[ *[0-9]*: *[0-9]*\] @ heap_v2/65536$' ||
    fail "bad sampled header: $(head -1 "$TMP/v2.heap")"
head -1 "$TMP/all.heap" | grep -q '\] @ heapprofile$' || fail "bad unsampled header: $(head -1 "$TMP/all.heap")"
grep -q '^MAPPED_LIBRARIES:$' "$TMP/v2.heap" || fail "no MAPPED_LIBRARIES section"
grep -q " $LEAKY\$" "$TMP/v2.heap" || fail "the maps do not name $LEAKY"

for f in v2 all; do
    for reader in google-pprof jeprof; do
        "$reader" --text --inuse_space "$LEAKY" "$TMP/$f.heap" >"$TMP/$f.$reader" 2>"$TMP/$f.$reader.err" ||
            fail "$reader refused $f.heap: $(cat "$TMP/$f.$reader.err")"
        cat "$TMP/$f.$reader"
        top=$(first_function "$TMP/$f.$reader")
        [ "$top" = "$LEAK_FN" ] || fail "$reader on $f.heap: top in-use function is '$top', want $LEAK_FN"
        ok "$reader reads $f.heap, top is $top"
    done
done
grep -q "Adjusting heap profiles for 1-in-65536 sampling rate" "$TMP/v2.jeprof.err" "$TMP/v2.jeprof" ||
    fail "jeprof did not see the sampling rate"

if command -v go >/dev/null 2>&1; then
    go_env
    go tool pprof -top -sample_index=inuse_space "$LEAKY" "$TMP/v2.heap" >"$TMP/v2.go" 2>&1 ||
        fail "go tool pprof refused v2.heap: $(cat "$TMP/v2.go")"
    top=$(first_function "$TMP/v2.go")
    [ "$top" = "$LEAK_FN" ] || fail "go tool pprof on v2.heap: top is '$top'"
    ok "go tool pprof reads v2.heap, top is $top"
fi

# Read back (addresses only in the file: heapinject symbolizes them).
"$HEAPINJECT" report "$TMP/v2.heap" --format collapsed >"$TMP/back.folded" 2>"$TMP/back.err" ||
    fail "heapinject report could not read its heap file: $(cat "$TMP/back.err")"
largest=$(largest_folded "$TMP/back.folded")
case "$largest" in
    *";$LEAK_FN "[0-9]*) ok "heapinject report read the heap file back: $largest" ;;
    *) fail "read back: largest stack is not $LEAK_FN: $(cat "$TMP/back.folded")" ;;
esac
