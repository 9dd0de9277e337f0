#!/usr/bin/env bash
# payload_fork.sh - fork while attached (RATE=1, a thread allocating during
# every fork): children and grandchildren run with plain-forward hooks and
# no agent, exit cleanly; the parent keeps profiling and its socket. A
# child that stays: its GOT slots are back to the allocator's own at once
# (pl_modules_atfork_child), while the parent is still attached, and after
# the parent's detach too (which never reaches it): before, a server's
# workers forked during a session kept our hooks for good.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"

pl_start pl_fork
pl_attach "$(pl_config rate=1)"
out=$(pl_cmd "fork 20" '^done fork' 120)
grep -q 'agent threads in parent: 1' "$TOUT" || fail "parent lost its agent thread"
[ "$out" = "done fork ok=20" ] || fail "children failed: $out $(grep '^child' "$TOUT" | head -3)"
[ -S "$SOCK" ] || fail "a child removed the parent's socket"
kept=$(pl_cmd keep '^kept child' | awk '{print $3}')
PIDS+=("$kept")
. "$ROOT/tests/stress/rel_lib.bash"
rel_hooks_gone "$kept" >/dev/null
alive "$kept" || fail "the kept child died"
echo "kept child $kept: no GOT slot hooked while the parent is attached"
pl_cmd run '^done run' >/dev/null
pl_snapshot "$TMP/s1.json"
pl_expect_exact "$TMP/s1.json" fork_parent_alloc --top
$CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
assert_alive "$TPID"
rel_hooks_gone "$kept" >/dev/null
kill "$kept"
ok "fork: children clean, parent still profiled"
