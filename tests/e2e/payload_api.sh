#!/usr/bin/env bash
# payload_api.sh - calloc, realloc (free old + alloc new), reallocarray,
# posix_memalign, aligned_alloc, memalign, valloc, pvalloc, and failing
# calls (not counted; a failed realloc keeps its block live): exact at RATE=1.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_api
pl_attach "$(pl_config rate=1)"
pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"
for f in f_calloc f_realloc f_reallocarray f_posix_memalign f_aligned_alloc f_memalign f_valloc f_pvalloc f_failing; do
    pl_expect_exact "$TMP/s1.json" "$f" --top
done
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
ok "every malloc-family entry point exact at RATE=1"
