#!/usr/bin/env bash
# payload_cxx.sh - C++ containers allocate through libstdc++'s operator new
# (libstdc++'s own GOT slots): exact objects and bytes per function at RATE=1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_cxx
pl_attach "$(pl_config rate=1)"
pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"
for f in make_vectors make_strings make_map; do pl_expect_exact "$TMP/s1.json" "$f"; done
# the innermost frame is operator new in libstdc++, then the STL, then us
$CLIENT show "$TMP/s1.json" | grep -A1 '^bucket' | grep -q 'operator new.*@libstdc++' ||
    fail "operator new not the innermost frame"
pl_cmd free '^done free' >/dev/null
pl_snapshot "$TMP/s2.json"
for f in make_vectors make_strings make_map; do
    pl_eq "$($CLIENT sum "$TMP/s2.json" "$f")" raw_live_objects 0
done
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "C++ containers exact at RATE=1"
