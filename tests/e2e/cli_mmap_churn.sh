#!/usr/bin/env bash
# cli_mmap_churn: the direct-mmap range table under four threads at once
# (issue 14). At RATE=1 (every mapping sampled) tests/targets/cli_mmap's
# churn threads map, unmap heads, tails, one-page holes and wholes, and
# mremap (growing, shrinking, moving) at random for 2 s. What they leave
# mapped must be exactly the live bytes of kind mmap under churn_thread:
# every partial unmap took out exactly its part. The target runs on.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/e2e/payload_lib.bash"

pl_start cli_mmap
"$HEAPINJECT" attach -p "$TPID" --rate 1 >"$TMP/attach.out" 2>&1 || fail "attach: $(cat "$TMP/attach.out")"
live=$(pl_cmd 'churn 2000 4' '^done live=' 60)
live=${live#done live=}
"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/s.json" 2>"$TMP/snap.err" || fail "snapshot: $(cat "$TMP/snap.err")"
"$HEAPINJECT" detach -p "$TPID" >"$TMP/detach.out" 2>&1 || fail "detach: $(cat "$TMP/detach.out")"
python3 - "$TMP/s.json" "$live" <<'PY' || fail "churn: live bytes differ"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
truth = int(sys.argv[2])
st = [s for s in d["stacks"] if s["kind"] == "mmap" and any(f.get("function") == "churn_thread" for f in s["frames"])]
raw = sum(s["sampled"]["live_bytes"] for s in st)
est = sum(s["live_bytes"] for s in st)
m = d["mmap"]
print(f"churn: truth {truth}, raw live {raw}, est live {est:.0f}, {len(st)} stacks; "
      f"{m['map_calls']} maps, {m['unmap_calls']} munmaps, {m['remap_calls']} mremaps, {m['tracked']} pieces, "
      f"{m['dropped_samples']} dropped")
assert m["map_calls"] > 1000 and m["unmap_calls"] > 1000 and m["remap_calls"] > 100, m
assert m["dropped_samples"] == 0
sys.exit(0 if raw == truth and abs(est - truth) <= 1 else 1)
PY
pl_cmd 'map 2 64' '^done live=' >/dev/null
assert_alive "$TPID"
ok "range table exact under 4 threads mapping, cutting and remapping"
