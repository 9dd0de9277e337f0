#!/usr/bin/env bash
# fork_follow_lazy: `attach --children --lazy-children` (config follow=2,
# issue 28: a process per connection paid its agent thread and the last
# snapshot it wrote). A followed child records from its first allocation
# but has no socket and no agent thread until a sample taken 150 ms or
# more after its fork starts them.
# Covers: payload/serve/lazy_agent.c, payload/serve/last_snapshot.c, payload/serve/start.c, payload/serve/fork_follow.c, payload/serve/agent.c, cli/cmd/options.c, cli/link/attach.c
# (1) 5 children that allocate once and exit(0) within a few ms leave
#     their last snapshots all the same (written by the exiting thread: no
#     agent was ever there), no socket, and `snapshot -p PARENT --children`
#     reports each under its pid with its allocation, marked exited.
# (2) A worker that allocated 21 blocks at once and then waits: no socket
#     while it has not sampled since 150 ms; `snapshot -p WORKER` says at
#     once (7, no wait) that its profiler has not started yet. Its allocation 0.3 s later
#     starts its agent: a socket and an agent thread, and `snapshot -p
#     WORKER` reports the 22 blocks, the 21 taken before the agent too.
#     `detach -p PARENT` takes it as a followed child; no slot stays hooked.
# (3) A worker still waiting for its agent when its parent detaches: its
#     next sample starts the agent, which finds the parent's socket gone
#     and detaches at once (slots restored, no socket left).
# Was: no --lazy-children; every followed child made its socket and agent
# thread in its fork handler.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../stress/rel_lib.bash"
. "$(dirname "$0")/fork_lib.bash"

rel_start fork_server "$SOCKDIR"
"$HEAPINJECT" attach -q -p "$TPID" --rate 1 --children --lazy-children 2>"$TMP/attach.err" ||
    fail "attach: $(cat "$TMP/attach.err")"

# (1) short-lived children
before=$(date +%s.%N)
line=$(rel_cmd "forks 5 exit" '^forks 5 ')
case "$line" in *" bad=0") ;; *) fail "children failed: $line" ;; esac
echo "short-lived children: $line"
mapfile -t KIDS < <(find "$SOCKDIR" -maxdepth 1 -name '*.last' -newermt "@$before" -printf '%f\n' | sed 's/\.last$//' | sort -n)
[ "${#KIDS[@]}" = 5 ] || fail "${#KIDS[@]} last snapshots of 5 children, want 5: $(ls -la "$SOCKDIR")"
socks=$(find "$SOCKDIR" -maxdepth 1 -name '*.sock' ! -name "$TPID.sock" | wc -l)
[ "$socks" = 0 ] || fail "$socks sockets of lazy children: $(ls -la "$SOCKDIR")"
"$HEAPINJECT" snapshot -p "$TPID" --children --format json -o "$TMP/tree.json" 2>"$TMP/tree.err" ||
    fail "snapshot of the tree: $(cat "$TMP/tree.err")"
python3 - "$TMP/tree.json" "$TPID" "${KIDS[@]}" <<'PY' || fail "the tree's report lacks the short-lived children (above): $(cat "$TMP/tree.err")"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
parent, kids = int(sys.argv[2]), [int(x) for x in sys.argv[3:]]
procs = {p["pid"]: p for p in d["processes"]}
assert sorted(procs) == sorted([parent] + kids), sorted(procs)
for k in kids:
    x = procs[k]["exit"]
    assert x and x["exit_code"] == 0 and x["snapshot_at_exit"] is True, (k, x)
    n = sum(s["alloc_objects"] for s in d["stacks"]
            if s["pid"] == k and any(f.get("function") == "worker_first_alloc" for f in s["frames"]))
    assert n == 1, (k, n)
print("tree report: %d exited children, each with its worker_first_alloc" % len(kids))
PY
for k in "${KIDS[@]}"; do [ ! -e "$SOCKDIR/$k.last" ] || fail "$k.last left after the tree's snapshot took it"; done

# (2) a long-lived worker (prefork: the blocks it inherits and checks)
rel_cmd prefork "^done prefork" >/dev/null
fork_worker
W=$CHILD
if [ -e "$SOCKDIR/$W.sock" ]; then
    # Only when 150 ms went by between its fork and its last block (a
    # loaded machine): then the agent started, as it should.
    echo "worker $W: socket at once (its first allocations took over 150 ms)"
else
    t0=$(date +%s%N)
    timeout 10 "$HEAPINJECT" snapshot -p "$W" >/dev/null 2>"$TMP/pending.err"
    rc=$?; ms=$((($(date +%s%N) - t0) / 1000000))
    [ "$rc" = 7 ] || fail "snapshot of a worker without its agent yet exited $rc, want 7: $(cat "$TMP/pending.err")"
    grep -q "pid $W: a followed child of $TPID whose profiler has not started yet" "$TMP/pending.err" ||
        fail "snapshot of a worker without its agent yet does not say so: $(cat "$TMP/pending.err")"
    echo "worker $W before its agent: snapshot exits 7 in $ms ms: $(tr '\n' ' ' <"$TMP/pending.err")"
    ! grep -qx heapinject /proc/"$W"/task/*/comm || fail "worker $W has an agent thread before it sampled late"
fi
sleep 0.3
kill -WINCH "$W"
wait_for_line "$TOUT" "^worker $W late ok" 20 || fail "worker $W: $(grep "^worker $W" "$TOUT" | tail -2)"
[ -S "$SOCKDIR/$W.sock" ] || fail "worker $W has no socket after its late sample: $(ls -la "$SOCKDIR")"
grep -qx heapinject /proc/"$W"/task/*/comm || fail "worker $W has no agent thread after its late sample"
"$HEAPINJECT" snapshot -p "$W" --format json -o "$TMP/w.json" 2>"$TMP/w.err" || fail "snapshot of worker $W: $(cat "$TMP/w.err")"
out=$(stacks_of "$TMP/w.json" worker_first_alloc worker_alloc worker_late_alloc parent_before_fork)
echo "worker $W: $out" | tr '\n' ';'; echo
expect_count "$out" worker_first_alloc 1 1
expect_count "$out" worker_alloc 20 20
expect_count "$out" worker_late_alloc 1 1
expect_count "$out" parent_before_fork 0 0

# (3) a worker waiting for its agent when the parent detaches
fork_worker
W2=$CHILD
"$HEAPINJECT" detach -p "$TPID" 2>"$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
cat "$TMP/d.err"
grep -q "detached too: .*$W" "$TMP/d.err" || fail "detach did not take the followed worker $W"
[ ! -e "$SOCKDIR/$W.sock" ] && [ ! -e "$SOCKDIR/$TPID.sock" ] || fail "sockets left: $(ls -la "$SOCKDIR")"
rel_hooks_gone "$TPID" >/dev/null; rel_hooks_gone "$W" >/dev/null
sleep 0.3
kill -WINCH "$W2"
wait_for_line "$TOUT" "^worker $W2 late ok" 20 || fail "worker $W2: $(grep "^worker $W2" "$TOUT" | tail -2)"
for ((i = 0; i < 100; i++)); do
    grep -qx heapinject /proc/"$W2"/task/*/comm 2>/dev/null || break
    sleep 0.05
done
((i < 100)) || fail "worker $W2's late agent did not leave after its parent's detach"
[ ! -e "$SOCKDIR/$W2.sock" ] || fail "worker $W2's socket left"
n=$(rel_hooks_gone "$W2")
echo "worker $W2 (parent detached before its agent): agent started and left; $n slots, none hooked"
for p in "$W" "$W2"; do
    kill -HUP "$p"
    wait_for_line "$TOUT" "^worker $p check errors=0" 30 || fail "worker $p: $(grep "^worker $p" "$TOUT" | tail -2)"
done
rel_cmd check '^check errors=0' >/dev/null
assert_alive "$TPID"; assert_alive "$W"; assert_alive "$W2"
if grep -q BAD "$TOUT"; then fail "$(grep BAD "$TOUT")"; fi
ok "lazy children: short-lived ones leave their last snapshots in the tree's report, a long-lived one gets its agent at a late sample with every sample kept"
