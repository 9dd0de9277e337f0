#!/usr/bin/env bash
# cli_go: a Go program with cgo. heapinject says plainly that the Go heap is
# out of its sight (a note, not a refusal), and profiles what the C part
# allocates: the C function's stack is ranked first.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/format_lib.bash"

need_reader go golang-go
export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GO111MODULE=off GOFLAGS=
go build -o "$TMP/cgo_cache" "$ROOT/tests/targets/go/cgo_cache.go" 2>"$TMP/go.err" ||
    fail "go build failed: $(cat "$TMP/go.err")"
"$TMP/cgo_cache" >"$TMP/go.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/go.out" ready 10 || fail "the Go target did not start"

"$HEAPINJECT" -p "$TPID" --duration 1.5 --rate 16K -o "$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed on a Go program: $(cat "$TMP/err.txt")"
cat "$TMP/err.txt"
grep -q "is a Go program" "$TMP/err.txt" || fail "no note that the Go heap is not seen"
grep -q "runtime/pprof" "$TMP/err.txt" || fail "the note does not say what to use for the Go heap"
awk '/^#1 /{top=1; next} /^#2 /{exit} top' "$TMP/report.txt" | grep -q '^ *c_cache_grow ' ||
    fail "the C function's stack is not ranked first: $(head -20 "$TMP/report.txt")"
assert_alive "$TPID"
assert_not_traced "$TPID"

# A C program gets no such note.
start_target cli_leaky
"$HEAPINJECT" -p "$TPID" --duration 0.5 -o "$TMP/c.txt" 2>"$TMP/c.err" || fail "C target: $(cat "$TMP/c.err")"
grep -q "Go program" "$TMP/c.err" && fail "a C program was called a Go program"
ok "Go program: its Go heap is named as unseen, its C allocations are profiled"
