#!/usr/bin/env bash
# cli_return_line: the report names the line of each call, also where the
# return address lands on the next line. In build/targets/cli_nextline every
# return address of the allocating stack does (malloc's returns to the test
# for the noreturn out-of-memory path, alloc_or_die's to the store of its
# result, keep_blocks' to the nanosleep), so a symbolizer that looks up the
# return address instead of the call before it names the wrong lines. The
# test checks with addr2line that the binary still has that property.
. "$(dirname "$0")/lib.sh"
command -v addr2line >/dev/null || fail "addr2line (binutils) missing"
SRC="$ROOT/tests/targets/cli_nextline.c"
line_of() { grep -n "CALL:$1 \*/" "$SRC" | cut -d: -f1; }
L_ALLOC=$(line_of alloc_or_die); L_KEEP=$(line_of keep_blocks); L_MAIN=$(line_of main)
[ -n "$L_ALLOC" ] && [ -n "$L_KEEP" ] && [ -n "$L_MAIN" ] || fail "CALL: markers missing in $SRC"

for fmt in json text; do
    start_target cli_nextline
    "$HEAPINJECT" -p "$TPID" --rate 16K --duration 1.5 --format "$fmt" -o "$TMP/nl.$fmt" 2>"$TMP/nl.$fmt.err" ||
        fail "session failed: $(cat "$TMP/nl.$fmt.err")"
    assert_alive "$TPID"
    kill "$TPID"
done
python3 - "$TMP/nl.json" "$TARGETS/cli_nextline" "$L_ALLOC" "$L_KEEP" "$L_MAIN" <<'PY' || fail "call lines wrong (see above)"
import hi_profile, json, subprocess, sys
d = hi_profile.load(sys.argv[1])
exe = sys.argv[2]
want = [("alloc_or_die", int(sys.argv[3])), ("keep_blocks", int(sys.argv[4])), ("main", int(sys.argv[5]))]
stacks = [s for s in d["stacks"] if any(f["function"] == "alloc_or_die" for f in s["frames"])]
assert stacks, "no stack through alloc_or_die: %s" % [[f["function"] for f in s["frames"]] for s in d["stacks"]]
for s in stacks:
    frames = [f for f in s["frames"] if f["module"] and f["module"].endswith("/cli_nextline")]
    got = [(f["function"], f["line"]) for f in frames[:3]]
    print("frames:", got, "file", frames[0]["file"])
    assert got == want, "expected %s, got %s" % (want, got)
    assert all(f["file"].endswith("tests/targets/cli_nextline.c") for f in frames[:3]), frames[0]["file"]
    # The precondition: each return address itself is on another line.
    for f, (fn, line) in zip(frames[:3], want):
        out = subprocess.run(["addr2line", "-e", exe, f["module_offset"]], capture_output=True,
                             text=True).stdout.strip()
        ret_line = int(out.rsplit(":", 1)[1].split()[0])
        assert ret_line != line, "%s: the return address %s is on the call's line %d: the target " \
            "no longer tests what it should (rebuild changed the code?)" % (fn, f["module_offset"], line)
        print("  %s: call on line %d, return address %s on line %d" % (fn, line, f["module_offset"], ret_line))
PY
grep -Eq "alloc_or_die +cli_nextline.c:$L_ALLOC\$" "$TMP/nl.text" || fail "text report lacks alloc_or_die cli_nextline.c:$L_ALLOC: $(cat "$TMP/nl.text")"
grep -Eq "keep_blocks +cli_nextline.c:$L_KEEP\$" "$TMP/nl.text" || fail "text report lacks keep_blocks cli_nextline.c:$L_KEEP"
ok "alloc_or_die:$L_ALLOC, keep_blocks:$L_KEEP, main:$L_MAIN named in json and text, each return address on the next line"
