#!/usr/bin/env bash
# payload_basic.sh - a C target at RATE=1: exact stacks and byte counts,
# live tracking through free, GOT slots hooked while attached and restored
# exactly after DETACH, socket removed, target alive, re-attach works.
# Covers: payload/interpose/modules.c, payload/sys/procmaps.c
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_basic
pl_got_dump "$TMP/got.before"
cp "/proc/$TPID/maps" "$TMP/maps.before"
pl_attach "$(pl_config rate=1)"

hello=$($CLIENT hello "$SOCK") || fail "HELLO failed"
echo "$hello"
grep -q '"rate": 1,' <<<"$hello" || fail "rate not 1 in HELLO"
grep -q "\"pid\": $TPID," <<<"$hello" || fail "HELLO pid is not the target's"

# While attached, patched slots point into the payload.
pl_got_dump "$TMP/got.during"
changed=$(diff "$TMP/got.before" "$TMP/got.during" | grep -c '^>')
echo "slots changed while attached: $changed"
[ "$changed" -ge 2 ] || fail "GOT slots were not patched"
grep -q '^pl_basic malloc' <<<"$(diff "$TMP/got.before" "$TMP/got.during" | sed -n 's/^> //p')" ||
    fail "the executable's malloc slot was not patched"

pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"
$CLIENT show "$TMP/s1.json" | head -30
for f in leak_a churn_b big_c; do pl_expect_exact "$TMP/s1.json" "$f" --top; done

# Threads and totals: one live thread (the main one), exact counters >= truth.
python3 - "$TMP/s1.json" "$TPID" <<'PY' || fail "thread/total records wrong"
import json, sys
s = json.load(open(sys.argv[1])); pid = int(sys.argv[2])
main = [t for t in s["threads"] if t["tid"] == pid]
assert main and main[0]["alive"] == 1 and main[0]["name"] == "pl_basic", s["threads"]
assert any(t["tid"] == 0 and t["name"] == "(exited)" for t in s["threads"])
t = s["totals"]
assert t["exact_alloc_calls"] >= 3010 and t["exact_alloc_bytes"] >= 1267360, t
assert t["exact_free_calls"] >= 2000 and t["exact_free_bytes"] >= 512000, t
assert t["raw_samples"] == t["exact_alloc_calls"], t  # RATE=1: every allocation
assert sum(s["hist_calls"]) == t["exact_alloc_calls"]
assert s["hist_calls"][6] >= 1000 and s["hist_calls"][8] >= 2000 and s["hist_calls"][16] >= 10
assert t["dropped_samples"] == 0
live = [b for b in s["buckets"] if b["raw_live_objects"]]
assert all(b["oldest_live_ns"] >= s["attach_ns"] for b in live)
PY

pl_cmd free '^done free' >/dev/null
pl_snapshot "$TMP/s2.json"
for f in leak_a big_c; do
    sum=$($CLIENT sum "$TMP/s2.json" "$f" --top)
    pl_eq "$sum" raw_live_objects 0
    pl_eq "$sum" est_live_bytes 0
done

out=$($CLIENT detach "$SOCK") || fail "DETACH failed"
[ "$out" = detached ] || fail "DETACH: $out"
for ((i = 0; i < 100; i++)); do [ -e "$SOCK" ] || break; sleep 0.05; done
[ -e "$SOCK" ] && fail "socket still there after DETACH"
pl_got_dump "$TMP/got.after"
diff "$TMP/got.before" "$TMP/got.after" || fail "GOT slots not restored exactly after DETACH"
# page protections of the executable and libc are as before (RELRO put back)
python3 - "$TMP/maps.before" "/proc/$TPID/maps" <<'PY' || fail "page protections changed"
import sys
def load(p):
    out = []
    for l in open(p):
        f = l.split()
        if len(f) >= 6 and ("pl_basic" in f[5] or "libc.so" in f[5]):
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            out.append((lo, hi, f[1]))
    return out
after = load(sys.argv[2])
for lo, hi, perm in load(sys.argv[1]):
    for alo, ahi, aperm in after:
        assert not (alo < hi and lo < ahi) or aperm == perm, (hex(lo), perm, hex(alo), aperm)
print("protections unchanged")
PY
assert_alive "$TPID"
pl_cmd run '^done run' >/dev/null
assert_alive "$TPID"

# A second session reuses the loaded library and starts from zero. (The
# run above bound the executable's lazy slots: compare with a new dump.)
pl_got_dump "$TMP/got.before2"
pl_attach "$(pl_config rate=1)"
pl_snapshot "$TMP/s3.json"
python3 -c "
import json,sys; s=json.load(open('$TMP/s3.json'))
assert s['totals']['raw_samples'] < 100, s['totals']" || fail "second session did not start clean"
out=$(pl_cmd stop '^stopped')
[ "$out" = "stopped 0" ] || fail "heapinject_stop: $out"
[ -e "$SOCK" ] && fail "socket still there after heapinject_stop"
pl_got_dump "$TMP/got.after2"
diff "$TMP/got.before2" "$TMP/got.after2" || fail "GOT slots not restored after heapinject_stop"
pl_cmd quit '^bye' >/dev/null
ok "exact RATE=1 stacks, GOT restored, re-attach"
