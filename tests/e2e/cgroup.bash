# cgroup.bash - a memory cgroup of a test's own (sourced after lib.sh).
# cg_make LIMIT_BYTES: creates it (v2 when its memory controller is there,
# else v1's memory controller of a hybrid system, under the test's own
# cgroup), sets CG_DIR and CG_MAX_FILE; skips the test when neither can
# be made. cg_move PID puts a process in it. Removed at exit (its
# processes killed by lib.sh's cleanup first).
cg_make() {
    local limit=$1 own
    if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
        own=$(sed -n 's/^0:://p' /proc/self/cgroup)
        CG_DIR=/sys/fs/cgroup/hi-e2e-$$
        # a child of the root may use memory only when the root hands it down
        grep -qw memory /sys/fs/cgroup/cgroup.subtree_control ||
            echo +memory >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
        CG_MAX_FILE=memory.max
    elif [ -e /sys/fs/cgroup/memory/memory.limit_in_bytes ]; then
        own=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
        CG_DIR=/sys/fs/cgroup/memory${own%/}/hi-e2e-$$
        CG_MAX_FILE=memory.limit_in_bytes
    else
        skip "no cgroup memory controller (neither v2's nor v1's) on this machine"
    fi
    mkdir "$CG_DIR" 2>/dev/null || skip "cannot create a memory cgroup ($CG_DIR): not root, or delegated elsewhere"
    echo "$limit" >"$CG_DIR/$CG_MAX_FILE" || fail "cannot set $CG_DIR/$CG_MAX_FILE to $limit"
    trap 'cleanup; rmdir "$CG_DIR" 2>/dev/null' EXIT
}

cg_move() {
    echo "$1" >"$CG_DIR/cgroup.procs" || fail "cannot move pid $1 into $CG_DIR"
}

# cg_start_target NAME [ARGS...]: start_target, the process born in the
# cgroup (v1 does not move what a process holds when it moves: its memory
# must be charged there from the start).
cg_start_target() {
    local name=$1; shift
    : >"$TMP/$name.out"
    bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' cg "$CG_DIR" "$TARGETS/$name" "$@" \
        >"$TMP/$name.out" 2>"$TMP/$name.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" ready 20 || fail "$name did not get ready in $CG_DIR: $(cat "$TMP/$name.err")"
}

# cg_current: bytes charged to the cgroup now.
cg_current() {
    if [ -e "$CG_DIR/memory.current" ]; then cat "$CG_DIR/memory.current"; else cat "$CG_DIR/memory.usage_in_bytes"; fi
}
