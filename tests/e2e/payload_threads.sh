#!/usr/bin/env bash
# payload_threads.sh - 16 threads at RATE=1: exact totals for their stack,
# one live thread record per worker (with its name), and after they exit
# their counters folded into the "(exited)" record.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_threads
pl_cmd spawn '^done spawn' >/dev/null
pl_attach "$(pl_config rate=1)"
pl_cmd work '^done work' 60 >/dev/null
pl_snapshot "$TMP/s1.json"
pl_expect_exact "$TMP/s1.json" thread_work --top
python3 - "$TMP/s1.json" <<'PY' || fail "thread records wrong"
import json, sys
s = json.load(open(sys.argv[1]))
w = [t for t in s["threads"] if t["name"].startswith("worker-") and t["alive"]]
assert len(w) == 16, [t["name"] for t in s["threads"]]
# Exact bytes are usable sizes (glibc: 136 for malloc(128), 72 for malloc(64)).
assert all(t["alloc_calls"] == 2000 and t["alloc_bytes"] == 1000 * (136 + 72) for t in w), w
assert all(t["free_calls"] == 1000 and t["free_bytes"] == 1000 * 72 for t in w), w
assert len({b["first_tid"] for b in s["buckets"] if b["symbols"] and b["symbols"][0].startswith("thread_work")}) >= 1
PY
pl_cmd exit '^done exit' >/dev/null
pl_snapshot "$TMP/s2.json"
python3 - "$TMP/s2.json" <<'PY' || fail "exited threads not folded"
import json, sys
s = json.load(open(sys.argv[1]))
assert not [t for t in s["threads"] if t["name"].startswith("worker-")], s["threads"]
ex = [t for t in s["threads"] if t["tid"] == 0][0]
assert ex["name"] == "(exited)" and ex["alloc_calls"] >= 32000 and ex["alloc_bytes"] >= 16 * 192000, ex
PY
pl_cmd free '^done free' >/dev/null
pl_snapshot "$TMP/s3.json"
pl_eq "$($CLIENT sum "$TMP/s3.json" thread_work --top)" raw_live_objects 0
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "16 threads exact, names, exited aggregate"
