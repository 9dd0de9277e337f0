#!/usr/bin/env bash
# format_pprof: `--format pprof` read by `go tool pprof` itself: symbolized
# Covers: cli/report/pprof_meta.c
# (functions from heapinject) and unsymbolized (--no-symbols: pprof finds
# the functions in the binary); leak_steady is the top in-use entry in both,
# and `heapinject report` reads the file back.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader go golang-go
go_env
start_leaky

snapshot "$TMP/sym.pb.gz" --rate 1 --format pprof
snapshot "$TMP/raw.pb.gz" --rate 1 --format pprof --no-symbols
[ "$(head -c2 "$TMP/sym.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "pprof output is not gzip"

go tool pprof -top -sample_index=inuse_space "$TMP/sym.pb.gz" >"$TMP/sym.top" 2>"$TMP/sym.err" ||
    fail "go tool pprof refused the symbolized profile: $(cat "$TMP/sym.err")"
cat "$TMP/sym.top"
grep -q "^heapinject: pid $TPID" "$TMP/sym.top" || fail "our header comment is not shown"
grep -q "^Build ID: [0-9a-f]\{40\}" "$TMP/sym.top" || fail "no build id on the main mapping"
top=$(first_function "$TMP/sym.top")
[ "$top" = "$LEAK_FN" ] || fail "symbolized: top in-use function is '$top', want $LEAK_FN"
ok "go tool pprof: symbolized profile, top is $top"

# The unsymbolized file has no names of its own ...
go tool pprof -top -symbolize=none -sample_index=inuse_space "$TMP/raw.pb.gz" >"$TMP/raw0.top" 2>&1 ||
    fail "go tool pprof refused the unsymbolized profile: $(cat "$TMP/raw0.top")"
grep -q "$LEAK_FN" "$TMP/raw0.top" && fail "--no-symbols profile carries function names"
# ... and pprof symbolizes it from the binary given on its command line.
go tool pprof -top -sample_index=inuse_space "$LEAKY" "$TMP/raw.pb.gz" >"$TMP/raw.top" 2>"$TMP/raw.err" ||
    fail "go tool pprof could not symbolize: $(cat "$TMP/raw.err")"
cat "$TMP/raw.top"
top=$(first_function "$TMP/raw.top")
[ "$top" = "$LEAK_FN" ] || fail "unsymbolized: top in-use function after pprof's symbolization is '$top', want $LEAK_FN"
ok "go tool pprof: unsymbolized profile symbolized by pprof, top is $top"

# Read back by heapinject itself.
"$HEAPINJECT" report "$TMP/sym.pb.gz" --format collapsed >"$TMP/back.folded" 2>"$TMP/back.err" ||
    fail "heapinject report could not read its pprof file: $(cat "$TMP/back.err")"
largest=$(largest_folded "$TMP/back.folded")
case "$largest" in
    *";$LEAK_FN "[0-9]*) ok "heapinject report read the pprof file back: $largest" ;;
    *) fail "read back: largest stack is not $LEAK_FN: $(cat "$TMP/back.folded")" ;;
esac
