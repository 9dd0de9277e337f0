#!/usr/bin/env bash
# payload_accuracy.sh - at the default rate (512 KiB) the unbiased estimates
# per known stack are within 10% of the truth: 1 GiB each as 64 B, 64 KiB
# and 1 MiB blocks (about 2000 samples per stack: the 10% bound is more
# than 4 standard deviations). Freed blocks leave nothing live. The size
# histogram, estimated from the samples since issue 17, agrees with the
# truth per size class and with the exact counters in total.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_basic
pl_attach "$(pl_config)"
$CLIENT hello "$SOCK" | grep -q '"rate": 524288,' || fail "default rate is not 512 KiB"
pl_cmd "bulk 1024" '^done bulk' 120 >/dev/null
pl_snapshot "$TMP/s.json"
for f in churn_small churn_mid churn_large; do
    truth=$(grep "^truth $f " "$TOUT")
    sum=$($CLIENT sum "$TMP/s.json" "$f" --top)
    echo "$f: $sum"
    python3 - "$(pl_field "$truth" alloc_bytes)" "$(pl_field "$sum" est_alloc_bytes)" \
        "$(pl_field "$truth" alloc_objs)" "$(pl_field "$sum" est_alloc_objects)" "$sum" <<'PY' || fail "$f estimate off"
import sys
tb, eb, to, eo = (int(x) for x in sys.argv[1:5])
print("  bytes %.3f objects %.3f of truth" % (eb / tb, eo / to))
assert abs(eb / tb - 1) <= 0.10 and abs(eo / to - 1) <= 0.10
assert "raw_live_objects=0 " in sys.argv[5] and "est_live_bytes=0 " in sys.argv[5]
PY
done
truths=$(grep -E "^truth churn_(small|mid|large) " "$TOUT")
python3 - "$TMP/s.json" "$truths" <<'PY' || fail "size histogram off"
import json, sys
s = json.load(open(sys.argv[1]))
t = s["totals"]
objs = {}
for line in sys.argv[2].splitlines():
    w = line.split()
    objs[w[1]] = int(dict(x.split("=") for x in w[2:])["alloc_objs"])
# 64 B, 64 KiB and 1 MiB blocks: classes 2^6, 2^16, 2^20
for f, c in (("churn_small", 6), ("churn_mid", 16), ("churn_large", 20)):
    r = s["hist_calls"][c] / objs[f]
    print("  histogram class 2^%d: %.3f of %s's allocations" % (c, r, f))
    assert abs(r - 1) <= 0.10, (f, c, s["hist_calls"][c], objs[f])
rc, rb = sum(s["hist_calls"]) / t["exact_alloc_calls"], sum(s["hist_bytes"]) / t["exact_alloc_bytes"]
print("  histogram in all: calls %.3f, usable bytes %.3f of the exact counts" % (rc, rb))
assert abs(rc - 1) <= 0.10 and abs(rb - 1) <= 0.10
PY
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "default-rate estimates within 10%, size histogram too"
