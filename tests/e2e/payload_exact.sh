#!/usr/bin/env bash
# payload_exact.sh - every counter equals the truth (==, not >=) at RATE=1
# for a fixed sequence of malloc, calloc, realloc (grow, shrink, to zero,
# from NULL, of an mmapped block), posix_memalign and free
# (build/targets/pl_exact). The counters of the snapshot before each step
# are subtracted, so nothing else the process did counts. The exact counts
# of allocations and frees are both in the block's usable size (glibc's
# chunk header, as malloc_usable_size), which differs from the requested
# size for every block here; the sampled estimates are in requested bytes;
# a realloc is the free of its old block plus the
# allocation of the new one.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_exact
pl_attach "$(pl_config rate=1)"
pl_snapshot "$TMP/s0.json"
pl_cmd seq '^done seq' >/dev/null
pl_snapshot "$TMP/s1.json"
pl_cmd release '^done release' >/dev/null
pl_snapshot "$TMP/s2.json"
grep '^truth' "$TOUT"
python3 - "$TMP" "$TPID" "$TOUT" <<'PY' || fail "counters differ from the truth (see above)"
import json, sys
d, pid, tout = sys.argv[1], int(sys.argv[2]), sys.argv[3]
snaps = [json.load(open("%s/s%d.json" % (d, i))) for i in range(3)]
truth = {}
for line in open(tout):
    if line.startswith("truth "):
        w = line.split()
        truth[w[1]] = dict((k, int(v)) for k, v in (x.split("=") for x in w[2:]))
# The requested sizes, known here independently of the target's own sums.
req_alloc = {"seq": 100 + 300 + 5000 + 200 + 777 + 1000 + 200000 + 400000, "release": 0}
req_freed = {"seq": 100 + 5000 + 777 + 200000, "release": 200 + 300 + 1000 + 400000}
calls = {"seq": (8, 4), "release": (0, 4)}
live = {"seq": (4, 401500), "release": (-4, -401500)}
bad = []
def eq(what, got, want):
    print("  %-40s %12d %s %d" % (what, got, "==" if got == want else "!= expected", want))
    if got != want:
        bad.append(what)

def thread(s):
    # A thread has a record once it made a counted call.
    t = [t for t in s["threads"] if t["tid"] == pid]
    return t[0] if t else dict(alloc_calls=0, alloc_bytes=0, free_calls=0, free_bytes=0)

def bucket_sum(s, func):
    keys = ["raw_alloc_objects", "raw_alloc_bytes", "raw_live_objects", "raw_live_bytes",
            "est_alloc_objects", "est_alloc_bytes", "est_live_objects", "est_live_bytes"]
    tot = dict((k, 0) for k in keys)
    for b in s["buckets"]:
        names = [x.split("@")[0] for x in b["symbols"]]
        if func in names:
            for k in keys:
                tot[k] += b[k]
    return tot

for i, step in enumerate(["seq", "release"]):
    a, b, t = snaps[i], snaps[i + 1], truth[step]
    nalloc, nfree = calls[step]
    print("%s:" % step)
    # The target's own truth agrees with what this test knows.
    eq("truth alloc_calls", t["alloc_calls"], nalloc)
    eq("truth free_calls", t["free_calls"], nfree)
    eq("truth req_alloc_bytes", t["req_alloc_bytes"], req_alloc[step])
    eq("truth req_free_bytes", t["req_free_bytes"], req_freed[step])
    if t["free_bytes"] == t["req_free_bytes"] or (nalloc and t["alloc_bytes"] == t["req_alloc_bytes"]):
        bad.append("usable sizes equal the requested ones: the sequence tests nothing")
    ta, tb = a["totals"], b["totals"]
    dt = lambda k: tb[k] - ta[k]
    eq("exact_alloc_calls", dt("exact_alloc_calls"), nalloc)
    eq("exact_alloc_bytes (usable)", dt("exact_alloc_bytes"), t["alloc_bytes"])
    eq("exact_free_calls", dt("exact_free_calls"), nfree)
    eq("exact_free_bytes (usable)", dt("exact_free_bytes"), t["free_bytes"])
    eq("raw_samples", dt("raw_samples"), nalloc)
    eq("dropped_samples", dt("dropped_samples"), 0)
    eq("est_alloc_objects", dt("est_alloc_objects"), nalloc)
    eq("est_alloc_bytes", dt("est_alloc_bytes"), req_alloc[step])
    eq("est_free_objects", dt("est_free_objects"), nfree)
    eq("est_free_bytes (sampled, requested)", dt("est_free_bytes"), req_freed[step])
    eq("est_live_objects", dt("est_live_objects"), live[step][0])
    eq("est_live_bytes", dt("est_live_bytes"), live[step][1])
    ha, hb = thread(a), thread(b)
    eq("thread alloc_calls", hb["alloc_calls"] - ha["alloc_calls"], nalloc)
    eq("thread alloc_bytes (usable)", hb["alloc_bytes"] - ha["alloc_bytes"], t["alloc_bytes"])
    eq("thread free_calls", hb["free_calls"] - ha["free_calls"], nfree)
    eq("thread free_bytes (usable)", hb["free_bytes"] - ha["free_bytes"], t["free_bytes"])
    eq("histogram calls", sum(b["hist_calls"]) - sum(a["hist_calls"]), nalloc)
    eq("histogram bytes (usable)", sum(b["hist_bytes"]) - sum(a["hist_bytes"]), t["alloc_bytes"])
    sa, sb = bucket_sum(a, "ex_seq"), bucket_sum(b, "ex_seq")
    ds = lambda k: sb[k] - sa[k]
    for kind in ("raw", "est"):
        eq("ex_seq %s_alloc_objects" % kind, ds(kind + "_alloc_objects"), nalloc)
        eq("ex_seq %s_alloc_bytes" % kind, ds(kind + "_alloc_bytes"), req_alloc[step])
        eq("ex_seq %s_live_objects" % kind, ds(kind + "_live_objects"), live[step][0])
        eq("ex_seq %s_live_bytes" % kind, ds(kind + "_live_bytes"), live[step][1])
assert not bad, "wrong: %s" % bad
PY
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "every counter exact (==) across malloc, calloc, realloc grow/shrink/to zero/from NULL/mmapped, posix_memalign, free"
