#!/usr/bin/env bash
# cli_go: a Go program with cgo. heapinject says plainly that the Go heap is
# out of its sight (a note, not a refusal), and profiles what the C part
# allocates: the C function's stack is ranked first, and Go's frames agree
# with `go tool addr2line`.
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

# Every frame of Go code says what `go tool addr2line` says (Go's own line
# table), or nothing: runtime.asmcgocall showed as gcc_mmap.c:37 (a cgo
# object's unrelocated DWARF 5 ranges) where Go says asm_amd64.s:844.
"$HEAPINJECT" -p "$TPID" --duration 1.5 --rate 16K -q --format json -o "$TMP/go.json" 2>"$TMP/err.txt" ||
    fail "heapinject --format json failed on a Go program: $(cat "$TMP/err.txt")"
python3 - "$TMP/go.json" "$TMP/cgo_cache" <<'PY' || fail "Go frames disagree with go tool addr2line (above)"
import hi_profile, json, subprocess, sys
d, exe = hi_profile.load(sys.argv[1]), sys.argv[2]
ours = {}
for s in d["stacks"]:
    prev = None
    for f in s["frames"]:
        # The first frame of each PC: the innermost, as Go's table gives it.
        if f["module"] == exe and f["addr"] != prev:
            base = (f["file"] or "").rsplit("/", 1)[-1]
            ours.setdefault(int(f["module_offset"], 16) - 1, ("%s:%d" % (base, f["line"]), f["function"]))
        prev = f["addr"]
pcs = sorted(ours)
out = subprocess.run(["go", "tool", "addr2line", exe], input="".join("0x%x\n" % pc for pc in pcs),
                     capture_output=True, text=True, check=True).stdout.split("\n")
compared, bad = 0, []
for i, pc in enumerate(pcs):
    gofn, gopos = out[2 * i], out[2 * i + 1]
    if gofn == "?":
        continue  # C code: only its DWARF knows it
    gopos = gopos.rsplit("/", 1)[-1]
    compared += 1
    mine, fn = ours[pc]
    ok = mine == gopos or mine == ":0"  # no line at all is allowed, a wrong one is not
    print("0x%x %-40s heapinject %-24s go %s %s" % (pc, fn, mine, gopos, "" if ok else "WRONG"))
    if not ok:
        bad.append(pc)
assert compared, "no Go frame that go tool addr2line knows"
assert not bad, "%d of %d Go frames disagree" % (len(bad), compared)
print("%d Go frames agree with go tool addr2line" % compared)
PY
assert_alive "$TPID"
assert_not_traced "$TPID"

# A C program gets no such note.
start_target cli_leaky
"$HEAPINJECT" -p "$TPID" --duration 0.5 -o "$TMP/c.txt" 2>"$TMP/c.err" || fail "C target: $(cat "$TMP/c.err")"
grep -q "Go program" "$TMP/c.err" && fail "a C program was called a Go program"
ok "Go program: its Go heap is named as unseen, its C allocations are profiled"
