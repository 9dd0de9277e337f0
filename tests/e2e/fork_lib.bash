# fork_lib.bash - helpers of the fork_follow*.sh tests (sourced after
# lib.sh and tests/stress/rel_lib.bash; not a test itself).

FUID=$(id -u)
SOCKDIR=/tmp/heapinject-$FUID
[ -d /run/user/$FUID ] && SOCKDIR=/run/user/$FUID/heapinject

# fork_worker: "fork" to the server; sets CHILD and waits for its line.
fork_worker() {
    CHILD=$(rel_cmd fork '^forked ' | awk '{print $2}')
    PIDS+=("$CHILD")
    wait_for_line "$TOUT" "^worker $CHILD ready" 30 || fail "worker $CHILD did not get ready: $(tail -3 "$TERR")"
}

# stacks_of JSON FUNCTION...: for each FUNCTION, "FUNCTION live_objects
# alloc_objects live_bytes" summed over the stacks through it (exact at
# rate 1), and the process's totals.
stacks_of() {
    python3 - "$@" <<'PY'
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
for fn in sys.argv[2:]:
    lo = ao = lb = 0
    for s in d["stacks"]:
        if any(f.get("function") == fn for f in s["frames"]):
            lo += s["live_objects"]; ao += s["alloc_objects"]; lb += s["live_bytes"]
    print(fn, lo, ao, lb)
t = d.get("totals", {})
print("totals", t.get("live_objects"), t.get("alloc_objects"), len(d["stacks"]))
PY
}

# expect_count OUT FUNCTION LIVE ALLOC: the line of stacks_of for FUNCTION.
expect_count() {
    local got; got=$(awk -v f="$2" '$1 == f {print $2, $3}' <<<"$1")
    [ "$got" = "$3 $4" ] || fail "$2: live/allocated objects '$got', want '$3 $4' in: $1"
}
