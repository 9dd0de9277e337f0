#!/usr/bin/env bash
# payload_libc.sh - allocations made inside libc (strdup, getline, fopen go
# through libc's own GOT slots): exact counts at RATE=1, libc frame on top.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

seq 1 200 | sed 's/^/line /' >"$TMP/lines.txt"
pl_start pl_libc "$TMP/lines.txt"
pl_attach "$(pl_config rate=1)"
pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"

pl_expect_exact "$TMP/s1.json" do_strdup
python3 - "$TMP/s1.json" <<'PY' || fail "libc stacks wrong"
import json, sys
s = json.load(open(sys.argv[1]))
def names(b): return [x.split("@")[0] for x in b["symbols"]]
def pick(pred): return [b for b in s["buckets"] if pred(names(b))]
dup = pick(lambda n: "do_strdup" in n)
assert len(dup) == 1 and "strdup" in names(dup[0])[0] and names(dup[0])[1] == "do_strdup", [names(b) for b in dup]
# getline's line buffers: innermost frame getdelim/getline, 100 x 120 bytes
gl = pick(lambda n: "do_getline" in n and ("getdelim" in n[0] or "getline" in n[0]))
assert sum(b["raw_alloc_objects"] for b in gl) == 100, [names(b) for b in gl]
assert sum(b["raw_alloc_bytes"] for b in gl) == 12000
# fopen: 50 FILE objects, all the same size, still live
fo = pick(lambda n: "do_fopen" in n)
objs = sum(b["raw_alloc_objects"] for b in fo); nbytes = sum(b["raw_alloc_bytes"] for b in fo)
assert objs == 50 and nbytes % 50 == 0 and nbytes > 0, (objs, nbytes)
assert "fopen" in names(fo[0])[0] or "fopen" in names(fo[0])[1], names(fo[0])
assert sum(b["raw_live_objects"] for b in fo) == 50
PY
pl_cmd free '^done free' >/dev/null
pl_snapshot "$TMP/s2.json"
for f in do_strdup do_getline do_fopen; do
    pl_eq "$($CLIENT sum "$TMP/s2.json" "$f")" raw_live_objects 0
done
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "libc-internal allocations exact at RATE=1"
