#!/usr/bin/env bash
# svc_unit: `heapinject --unit NAME` profiles a systemd unit's processes,
# its cgroup found without systemctl (issue 28): a cgroup v2 directory
# named NAME.service in a slice, found by NAME and by NAME.service; a unit
# with no cgroup is "no such unit" with exit 3; a name two slices have is
# refused with both listed (exit 2). The workers' own checks pass after.
# Covers: cli/session/unit.c
. "$(dirname "$0")/lib.sh"
for base in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [ "$(stat -fc %T "$base" 2>/dev/null)" = cgroup2fs ] && break
    base=
done
[ -n "$base" ] || skip "no cgroup v2 hierarchy on this machine"
UNIT=hi-test-$$
SLICE=$base/hi-e2e-$$.slice
OTHER=$base/hi-e2e-$$-other.slice
mkdir -p "$SLICE/$UNIT.service" 2>/dev/null || skip "cannot create a cgroup in $base (not root, or delegated elsewhere)"
trap 'cleanup; rmdir "$OTHER/$UNIT.service" "$OTHER" "$SLICE/$UNIT.service" "$SLICE" 2>/dev/null' EXIT
bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' cg "$SLICE/$UNIT.service" "$TARGETS/svc_prefork" 2 1 \
    >"$TMP/svc_prefork.out" 2>"$TMP/svc_prefork.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/svc_prefork.out" ready 20 || fail "svc_prefork did not get ready in its unit's cgroup"
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
for name in "$UNIT" "$UNIT.service"; do
    timeout -k 5 120 "$HEAPINJECT" --unit "$name" --duration 1 --rate 64K --format json -o "$TMP/r.json" \
        2>"$TMP/r.err" || fail "--unit $name failed: $(cat "$TMP/r.err")"
    python3 - "$TMP/r.json" "$TPID" "$LEAKER" "$$" "${W[@]}" <<'PY' || fail "--unit $name: wrong processes (above)"
import sys, hi_profile
d = hi_profile.load(sys.argv[1])
master, leaker, outside, workers = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), [int(x) for x in sys.argv[5:]]
pids = sorted(p["pid"] for p in d["processes"])
assert pids == sorted([master] + workers), pids
assert outside not in pids
leak = {s["pid"] for s in d["stacks"] if any(f.get("function") == "svc_leak_request" for f in s["frames"])}
assert leak == {leaker}, leak
PY
done
# status takes it too (every command that takes --cgroup does).
"$HEAPINJECT" status --unit "$UNIT" --format json >"$TMP/st.json" 2>"$TMP/st.err"; rc=$?
[ $rc = 7 ] || fail "status --unit: exit $rc (7: nothing attached), $(cat "$TMP/st.err")"
python3 -c "
import json, sys
a = json.load(open('$TMP/st.json'))
assert sorted(o['pid'] for o in a) == sorted([$TPID, ${W[0]}, ${W[1]}]), a
" || fail "status --unit: not the unit's processes"
"$HEAPINJECT" --unit "hi-none-$$" --duration 1 >/dev/null 2>"$TMP/bad.err"; rc=$?
[ $rc = 3 ] && grep -q "no such unit running: no cgroup directory named hi-none-$$ or hi-none-$$.service" "$TMP/bad.err" ||
    fail "a missing unit: exit $rc, $(cat "$TMP/bad.err")"
"$HEAPINJECT" attach --unit "a/b" >/dev/null 2>"$TMP/bad.err"; rc=$?
[ $rc = 2 ] && grep -q "is not a unit name" "$TMP/bad.err" || fail "a path as a unit: exit $rc, $(cat "$TMP/bad.err")"
mkdir -p "$OTHER/$UNIT.service" || fail "cannot make a second slice"
"$HEAPINJECT" snapshot --unit "$UNIT" >/dev/null 2>"$TMP/two.err"; rc=$?
[ $rc = 2 ] && grep -q "2 cgroups match" "$TMP/two.err" && grep -q "$SLICE/$UNIT.service" "$TMP/two.err" &&
    grep -q "$OTHER/$UNIT.service" "$TMP/two.err" || fail "two units of one name: exit $rc, $(cat "$TMP/two.err")"
for p in "$TPID" "${W[@]}"; do assert_not_traced "$p"; done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "--unit $UNIT and $UNIT.service found $SLICE/$UNIT.service and profiled its 3 processes; the leak under pid $LEAKER only"
