#!/usr/bin/env bash
# census_binhead: leaked blocks right before free chunks that glibc's bins
# in main_arena point at (tests/targets/census_binhead.c). A bin head holds
# a free chunk's header, which is the last word of the block before it:
# the census took main_arena's words as a program's pointers and called
# such a leaked block held by libc's data. Every one of them must be
# unreachable, and nothing else (the agent thread's dtv is the profiler's);
# the target's guard blocks check out after.
. "$(dirname "$0")/lib.sh"

start_target census_binhead
read -r leaked usable < <(sed -n 's/^truth leaked=\([0-9]*\) usable=\([0-9]*\)/\1 \2/p' "$TMP/census_binhead.out")
[ -n "$usable" ] || fail "no truth line"
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census: $(cat "$TMP/c.err")"
got=$(python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['census']
print([(s['blocks'], s['unreachable_blocks']) for s in c['sizes'] if s['size'] == int(sys.argv[2])])" "$TMP/c.json" "$usable")
[ "$got" = "[($leaked, $leaked)]" ] ||
    fail "(blocks, unreachable) of the $leaked leaked $usable-byte blocks: $got: a bin head in main_arena kept some"
# and nothing else: the block glibc allocated for the agent thread (its
# dtv, right before the top chunk after attach) is the profiler's, not a
# leak of the program's (main_arena's top had hidden it)
all=$(python3 -c "import json, sys; print(json.load(open(sys.argv[1]))['census']['unreachable']['blocks'])" "$TMP/c.json")
[ "$all" = "$leaked" ] || fail "$all blocks unreachable, $leaked leaked: $(python3 -c "
import json, sys
print(json.load(open(sys.argv[1]))['census']['unreachable']['groups'])" "$TMP/c.json")"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_binhead.out" verify 10 && grep -q "verify ok" "$TMP/census_binhead.out" ||
    fail "target data: $(cat "$TMP/census_binhead.out")"
ok "$leaked leaked blocks before binned free chunks: all unreachable; data intact"
