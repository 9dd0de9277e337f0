#!/usr/bin/env bash
# fork_follow: `attach --follow-forks` on a pre-fork server (issue 28,
# Covers: payload/interpose/modules.c, payload/record/cfi.c, payload/record/session.c, payload/serve/fatal.c, payload/serve/fork_follow.c, payload/serve/last_snapshot.c, payload/serve/start.c, payload/serve/teardown.c, payload/sys/seccomp_watch.c
# item 2). A worker forked mid-session has its own profiler before its
# first allocation: `snapshot -p WORKER` works with no injection into it,
# and its report has only its own allocations (at rate 1 exactly: the
# first one past the fork once, its 20 blocks; not the parent's blocks it
# inherited and freed). The parent's report is as if nothing had forked.
# vfork and syscall(SYS_fork) children start no profiler. After detach of
# both, no GOT slot points into the profiler in either and both checked
# their data. Without --follow-forks a worker is as before: no socket,
# `snapshot -p` says not attached (7), its slots are restored.
# Was: no option; with an older payload (follow=1 ignored) no socket.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stress/rel_lib.bash"
. "$(dirname "$0")/fork_lib.bash"

rel_start fork_server "$SOCKDIR"
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 --follow-forks 2>"$TMP/attach.err" || fail "attach: $(cat "$TMP/attach.err")"
rel_cmd prefork '^done prefork' >/dev/null
fork_worker
W=$CHILD
[ -S "$SOCKDIR/$W.sock" ] || fail "no socket of worker $W in $SOCKDIR: $(ls -la "$SOCKDIR")"
line=$(rel_cmd vfork '^vfork ')
[ "$line" = "vfork socket=0 rawfork socket=0" ] || fail "a vfork or raw fork child has a profiler socket: $line"

"$HEAPINJECT" snapshot -p "$W" --format json -o "$TMP/w.json" 2>"$TMP/w.err" || fail "snapshot of worker $W: $(cat "$TMP/w.err")"
out=$(stacks_of "$TMP/w.json" worker_first_alloc worker_alloc parent_before_fork parent_after_fork)
echo "worker $W: $out" | tr '\n' ';'; echo
expect_count "$out" worker_first_alloc 1 1
expect_count "$out" worker_alloc 20 20
expect_count "$out" parent_before_fork 0 0
expect_count "$out" parent_after_fork 0 0
grep -q '^totals 21 21 ' <<<"$out" || fail "worker $W: totals are not its 21 blocks: $out"

"$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/p.json" 2>"$TMP/p.err" || fail "snapshot of the parent: $(cat "$TMP/p.err")"
out=$(stacks_of "$TMP/p.json" worker_first_alloc worker_alloc parent_before_fork parent_after_fork)
echo "parent $TPID: $out" | tr '\n' ';'; echo
expect_count "$out" parent_before_fork 8 8
expect_count "$out" parent_after_fork 5 5
expect_count "$out" worker_first_alloc 0 0
expect_count "$out" worker_alloc 0 0

# Forks while other threads allocate and walk the loader's list (its lock
# held across some forks): every child starts its profiler, allocates and
# exits 0 (exit: its last snapshot written), none hangs; at most 16 last
# snapshots kept in the directory.
rel_cmd "churn 2" '^churning' >/dev/null
# A child forked while a churning thread held the loader's list lock
# (dl_iterate_phdr) gets no profiler: that lock stays held in it, and its
# session would hang on it (it did: child and agent waiting on it).
line=$(rel_cmd "forks 36 exit" '^forks 36 ' 120)
nlast=$(find "$SOCKDIR" -name '*.last' | wc -l)
echo "with 2 threads churning: $line; $nlast last snapshots kept (one a followed child, 16 at most)"
grep -q 'bad=0$' <<<"$line" || fail "fork children failed: $line"
((nlast > 0)) || fail "no child was followed while threads churned"
((nlast <= 16)) || fail "$nlast last snapshots in $SOCKDIR, the bound is 16"
find "$SOCKDIR" -name '*.last' -delete
rel_cmd unchurn '^churned' >/dev/null

"$HEAPINJECT" detach -q -p "$W" 2>"$TMP/dw.err" || fail "detach of worker $W: $(cat "$TMP/dw.err")"
"$HEAPINJECT" detach -q -p "$TPID" 2>"$TMP/dp.err" || fail "detach of the parent: $(cat "$TMP/dp.err")"
n=$(rel_hooks_gone "$TPID"); m=$(rel_hooks_gone "$W")
echo "after detach: $n slots of the parent, $m of the worker, none hooked"
[ ! -e "$SOCKDIR/$W.sock" ] && [ ! -e "$SOCKDIR/$TPID.sock" ] || fail "sockets left: $(ls -la "$SOCKDIR")"
kill -HUP "$W"
wait_for_line "$TOUT" "^worker $W check errors=0" 30 || fail "worker $W: $(grep "^worker $W" "$TOUT" | tail -2)"
rel_cmd check '^check errors=0' >/dev/null

# Without --follow-forks: as before.
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 2>"$TMP/attach2.err" || fail "attach: $(cat "$TMP/attach2.err")"
fork_worker
[ ! -e "$SOCKDIR/$CHILD.sock" ] || fail "worker $CHILD has a socket without --follow-forks"
"$HEAPINJECT" snapshot -p "$CHILD" >/dev/null 2>"$TMP/s2.err"
rc=$?
[ "$rc" = 7 ] || fail "snapshot of an unfollowed worker exited $rc, want 7: $(cat "$TMP/s2.err")"
rel_hooks_gone "$CHILD" >/dev/null
"$HEAPINJECT" detach -q -p "$TPID" 2>"$TMP/dp2.err" || fail "detach: $(cat "$TMP/dp2.err")"
rel_hooks_gone "$TPID" >/dev/null
assert_alive "$TPID"; assert_alive "$W"; assert_alive "$CHILD"
rel_cmd check '^check errors=0' >/dev/null
if grep -q BAD "$TOUT"; then fail "$(grep BAD "$TOUT")"; fi
ok "a worker forked mid-session is profiled from its first allocation, alone; the parent's report is its own; both restored"
