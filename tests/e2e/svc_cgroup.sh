#!/usr/bin/env bash
# svc_cgroup: `heapinject --cgroup PATH` profiles every process of a cgroup
# v2 directory (issue 28: a systemd service's or a container's), given
# absolute or relative to /sys/fs/cgroup; a process outside it is not
# profiled; all are detached after and the workers' own checks pass.
. "$(dirname "$0")/lib.sh"
# A cgroup v2 directory of the test's own: v2 alone, or v2 beside v1 (its
# unified/ hierarchy); no controller is needed to list processes.
for base in /sys/fs/cgroup /sys/fs/cgroup/unified; do
    [ "$(stat -fc %T "$base" 2>/dev/null)" = cgroup2fs ] && break
    base=
done
[ -n "$base" ] || skip "no cgroup v2 hierarchy on this machine"
CG_DIR=$base/hi-e2e-svc-$$
mkdir "$CG_DIR" 2>/dev/null || skip "cannot create a cgroup in $base (not root, or delegated elsewhere)"
trap 'cleanup; rmdir "$CG_DIR" 2>/dev/null' EXIT
: >"$TMP/svc_prefork.out"
bash -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' cg "$CG_DIR" "$TARGETS/svc_prefork" 2 1 \
    >"$TMP/svc_prefork.out" 2>"$TMP/svc_prefork.err" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/svc_prefork.out" ready 20 || fail "svc_prefork did not get ready in $CG_DIR"
mapfile -t W < <(awk '/^worker [0-9]+$/{print $2}' "$TMP/svc_prefork.out")
LEAKER=$(awk '/^leaker /{print $2}' "$TMP/svc_prefork.out")
[ "${#W[@]}" = 2 ] || fail "the target did not say its workers: $(cat "$TMP/svc_prefork.out")"
PIDS+=("${W[@]}")
OUT_PID=$$   # this shell: not in the cgroup
REL=${CG_DIR#$base/}
for sel in "$CG_DIR" "$REL"; do
    timeout -k 5 120 "$HEAPINJECT" --cgroup "$sel" --duration 1 --rate 64K --format json -o "$TMP/r.json" \
        2>"$TMP/r.err" || fail "--cgroup $sel failed: $(cat "$TMP/r.err")"
    python3 - "$TMP/r.json" "$TPID" "$LEAKER" "$OUT_PID" "${W[@]}" <<'PY' || fail "--cgroup $sel: wrong processes (above)"
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
"$HEAPINJECT" --cgroup "$CG_DIR/nonexistent" --duration 1 >/dev/null 2>"$TMP/bad.err"; rc=$?
[ $rc = 3 ] && grep -q "cannot read" "$TMP/bad.err" || fail "a missing cgroup: exit $rc, $(cat "$TMP/bad.err")"
for p in "$TPID" "${W[@]}"; do assert_not_traced "$p"; done
kill -TERM "$TPID"
wait_for_line "$TMP/svc_prefork.out" "master ok 2" 20 || fail "the workers' data checks: $(cat "$TMP/svc_prefork.out")"
ok "--cgroup (absolute and relative) profiled the cgroup's 3 processes, the leak under pid $LEAKER only"
