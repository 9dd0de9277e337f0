#!/usr/bin/env bash
# census_nsinit: a census of a process that is pid 1 of its own pid
# namespace (a container's init). Such a process cannot make a sibling
# (clone with CLONE_PARENT answers EINVAL), so its copy is its own child,
# exit signal 0 (payload/census/census.c, clone_copy): the census is taken all
# the same, the agent reaps the copy (no child, no zombie of the process
# left after each census), and the process's data checks out.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || skip "needs root for unshare -p"
unshare -pfm --mount-proc true 2>/dev/null || skip "unshare -p not permitted here"
outside_tmp census_writer
unshare -pfm --mount-proc --propagation private sh -c "mount -t tmpfs tmpfs /tmp && exec '$OUTSIDE_BIN' 8 idle" \
    >"$TMP/ns.out" 2>"$TMP/ns.err" &
USH=$!
PIDS+=("$USH")
wait_for_line "$TMP/ns.out" ready 10 || fail "target did not start: $(cat "$TMP/ns.err")"
TPID=$(pgrep -n -f "^$OUTSIDE_BIN") || fail "cannot find the target's host pid"
PIDS+=("$TPID")
[ "$(awk '/^NSpid:/{print $3}' "/proc/$TPID/status")" = 1 ] || fail "target is not pid 1 of its own namespace"

no_child_left() {
    local kids i
    # the agent reaps its copy as soon as it has ended (a moment after END)
    for ((i = 0; i < 100; i++)); do
        kids=$(ps -o pid=,stat=,comm= --ppid "$TPID")
        [ -z "$kids" ] && return 0
        sleep 0.05
    done
    fail "$1: the census left a child of the namespace's init $TPID: $kids"
}

# a census by itself (attach, census, detach), then two in one session
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c1.json" 2>"$TMP/c1.err" ||
    fail "census of a namespace's init: $(cat "$TMP/c1.err")"
python3 - "$TMP/c1.json" <<'PY' || fail "census of the namespace's init: $(head -c 600 "$TMP/c1.json")"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
held = c["in_use"]["bytes"]
assert 8 << 20 <= held < 9 << 20, held
print("in use", held, "bytes,", c["in_use"]["blocks"], "blocks; unreachable", c["unreachable"]["blocks"])
PY
no_child_left "census alone"
"$HEAPINJECT" attach -p "$TPID" --ttl 0 2>"$TMP/a.err" || fail "attach: $(cat "$TMP/a.err")"
for n in 2 3; do
    "$HEAPINJECT" census -q -p "$TPID" -o "$TMP/c$n.txt" 2>"$TMP/c$n.err" || fail "census $n: $(cat "$TMP/c$n.err")"
    grep -q "in use .* 8.0 MiB" "$TMP/c$n.txt" || fail "census $n: $(head -5 "$TMP/c$n.txt")"
    no_child_left "census $n in a session"
done
"$HEAPINJECT" detach -p "$TPID" 2>"$TMP/d.err" || fail "detach: $(cat "$TMP/d.err")"
assert_alive "$TPID"
kill -USR1 "$TPID"
wait_for_line "$TMP/ns.out" verify 10 && grep -q "verify ok" "$TMP/ns.out" || fail "target data: $(cat "$TMP/ns.out")"
ok "pid 1 of its own namespace: 3 censuses (its copy its own child), none left behind, data intact"
