#!/usr/bin/env bash
# cli_pressure_snapshot: a target in a memory cgroup with a 128 MiB limit
# grows until the kernel's OOM killer sends it SIGKILL, about 1.5 s after a
# background snapshot (every 2 s) that holds none of its growth. The agent
# sees the cgroup at 90% of its limit and pushes a snapshot at once: the
# report shows grow_until_oom with most of the limit's bytes, its NOTE and
# JSON say it was taken at memory pressure, and heapinject exits 3. A
# process that stays at 92% and lives gets the session's own report, and
# the pressure is said once. A cgroup near its limit with page cache the
# kernel can take back (inactive file pages) is not short of memory: no
# snapshot.
# Needs a writable memory cgroup (root): cgroup v1's memory hierarchy, or
# cgroup v2 with the memory controller; skipped otherwise.
# Covers: payload/serve/pressure.c
. "$(dirname "$0")/lib.sh"
python3 -c 'import json' 2>/dev/null || skip "python3 is needed to read the JSON reports"

LIMIT=$((128 << 20))
CGS=()
cg_cleanup() {
    cleanup
    local d
    [ -n "${CACHE_FILE:-}" ] && rm -f "$CACHE_FILE"
    for d in "${CGS[@]}"; do rmdir "$d" 2>/dev/null; done
}
trap cg_cleanup EXIT

# new_cgroup NAME: a memory cgroup limited to LIMIT (no swap either); sets CG.
new_cgroup() {
    CG=""
    if [ -w /sys/fs/cgroup/memory ] && mkdir "/sys/fs/cgroup/memory/$1" 2>/dev/null; then
        CG=/sys/fs/cgroup/memory/$1
        CGS+=("$CG")
        echo "$LIMIT" >"$CG/memory.limit_in_bytes" || fail "cannot set the limit of $CG"
        [ -e "$CG/memory.memsw.limit_in_bytes" ] && echo "$LIMIT" >"$CG/memory.memsw.limit_in_bytes"
        return 0
    fi
    if grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null && mkdir "/sys/fs/cgroup/$1" 2>/dev/null; then
        CG=/sys/fs/cgroup/$1
        CGS+=("$CG")
        [ -e "$CG/memory.max" ] || skip "the memory controller is not enabled for new cgroups under /sys/fs/cgroup"
        echo "$LIMIT" >"$CG/memory.max" || fail "cannot set the limit of $CG"
        [ -e "$CG/memory.swap.max" ] && echo 0 >"$CG/memory.swap.max"
        return 0
    fi
    skip "no writable memory cgroup (cgroup v1 /sys/fs/cgroup/memory or v2 with the memory controller; needs root)"
}

# run_oom NAME CLI_ARGS...: cli_oom in a new limited cgroup, the cli on it;
# after the cli's first background snapshot the target starts to grow.
# Sets TPID, TSTATUS (this shell's wait status of it), CRC.
run_oom() {
    local name=$1; shift
    new_cgroup "heapinject-e2e-$$-$name"
    : >"$TMP/$name.out"
    bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$TARGETS/cli_oom" >"$TMP/$name.out" 2>"$TMP/$name.terr" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$name.out" ready 10 || fail "cli_oom did not get ready: $(cat "$TMP/$name.terr")"
    "$HEAPINJECT" -v -p "$TPID" --duration 30 "$@" 2>"$TMP/$name.err" &
    local cli=$!
    PIDS+=("$cli")
    wait_for_line "$TMP/$name.err" "background snapshot" 20 || fail "no background snapshot: $(cat "$TMP/$name.err")"
    kill -USR1 "$TPID"
    wait "$TPID"; TSTATUS=$?
    wait "$cli"; CRC=$?
    grep -v '^inject:' "$TMP/$name.err"
}

run_oom on --format json -o "$TMP/on.json"
[ "$TSTATUS" -eq 137 ] || fail "the target's wait status is $TSTATUS, want 137 (SIGKILL from the OOM killer)"
[ "$CRC" -eq 3 ] || fail "heapinject exited $CRC, want 3 (the process exited)"
grep -Eq "pid $TPID is short of memory \(cgroup usage [0-9.]+ MiB of 128 MiB\): snapshot taken" "$TMP/on.err" ||
    fail "stderr does not say a snapshot was taken at memory pressure"
python3 - "$TMP/on.json" "$LIMIT" <<'PY' || fail "JSON report: see above"
import hi_profile, sys
d, limit = hi_profile.load(sys.argv[1]), int(sys.argv[2])
x = d.get("target_exit")
assert x, "no target_exit in the report"
assert x.get("snapshot") == "pressure", f"snapshot {x.get('snapshot')}, want pressure: {x}"
pr = x["pressure"]
assert pr["measure"].startswith("cgroup"), pr
assert pr["limit_bytes"] == limit and pr["usage_bytes"] >= limit * 0.9, pr
assert "snapshot taken at memory pressure (cgroup usage " in d["note"], d["note"]
grow = sum(s["live_bytes"] for s in d["stacks"] if any(f.get("function") == "grow_until_oom" for f in s["frames"]))
assert grow >= limit * 0.7, f"grow_until_oom holds {grow / 2**20:.1f} MiB in the report, want most of the {limit >> 20} MiB limit"
print(f"target_exit {x}; grow_until_oom {grow / 2**20:.1f} MiB")
PY
"$HEAPINJECT" report "$TMP/on.json" --format json -o "$TMP/on_again.json" 2>"$TMP/ra.err" ||
    fail "report FILE: $(cat "$TMP/ra.err")"
python3 - "$TMP/on.json" "$TMP/on_again.json" <<'PY' || fail "the pressure snapshot's target_exit did not survive report FILE"
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert a["target_exit"] == b["target_exit"] and a["note"] == b["note"], (a["target_exit"], b["target_exit"])
PY
ok "OOM-killed in a 128 MiB cgroup: the pressure snapshot holds grow_until_oom's bytes, exit 3; read back the same"

# A process that stays short of memory and lives: a snapshot a second at
# most, said once on stderr for the whole episode (12 s: it used to be said
# again every 10 s); the session ends as usual (exit 0, no NOTE).
new_cgroup "heapinject-e2e-$$-stays"
: >"$TMP/stays.out"
bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$TARGETS/cli_oom" --stop $((118 << 20)) \
    >"$TMP/stays.out" 2>"$TMP/stays.terr" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/stays.out" ready 10 || fail "cli_oom did not get ready"
kill -USR1 "$TPID"
wait_for_line "$TMP/stays.out" stopped 20 || fail "cli_oom did not grow to 118 MiB"
"$HEAPINJECT" -p "$TPID" --duration 12 -o "$TMP/stays.txt" 2>"$TMP/stays.err"; rc=$?
cat "$TMP/stays.err"; head -2 "$TMP/stays.txt"
[ "$rc" -eq 0 ] || fail "heapinject exited $rc, want 0 (the process lives)"
n=$(grep -c "short of memory" "$TMP/stays.err")
[ "$n" -eq 1 ] || fail "the pressure snapshots were said $n times on stderr in 12 s, want once"
grep -q '^NOTE' "$TMP/stays.txt" && fail "a NOTE in the report of a process that lives"
assert_alive "$TPID"
ok "short of memory but alive: said once, the session's own report, exit 0"

# --no-pressure-snapshot: the same end, the report is the background one.
run_oom off --no-pressure-snapshot --format json -o "$TMP/off.json"
[ "$TSTATUS" -eq 137 ] || fail "the target's wait status is $TSTATUS, want 137"
grep -q "short of memory" "$TMP/off.err" && fail "a pressure snapshot with --no-pressure-snapshot"
python3 -c 'import json,sys; x=json.load(open(sys.argv[1]))["target_exit"]; assert x["snapshot"]=="periodic", x' \
    "$TMP/off.json" || fail "the report is not the background snapshot"
ok "--no-pressure-snapshot: no snapshot at memory pressure"

# Page cache is not pressure: the cgroup's own writer fills it with a
# 256 MiB file (on disk: /var/tmp, not this test's tmpfs, whose pages
# would be shared memory), so its usage stays near the 128 MiB limit,
# mostly inactive file pages the kernel takes back at once. A target in it
# that only allocates its steady 256 KB/s gets no pressure snapshot.
new_cgroup "heapinject-e2e-$$-cache"
if [ -e "$CG/memory.current" ]; then usef=$CG/memory.current inact=inactive_file
else usef=$CG/memory.usage_in_bytes inact=total_inactive_file; fi
: >"$TMP/cache.out"
bash -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CG" "$TARGETS/cli_oom" >"$TMP/cache.out" 2>"$TMP/cache.terr" &
TPID=$!
PIDS+=("$TPID")
wait_for_line "$TMP/cache.out" ready 10 || fail "cli_oom did not get ready"
CACHE_FILE=$(mktemp /var/tmp/hi-e2e-cache.XXXXXX)
bash -c 'echo $$ >"$0/cgroup.procs" && exec dd if=/dev/zero of="$1" bs=1M count=256 conv=fsync status=none' \
    "$CG" "$CACHE_FILE" || fail "cannot write $CACHE_FILE in the cgroup"
cg_state() { echo "usage $(($(cat "$usef") >> 20)) MiB, $inact $(($(awk -v k="$inact" '$1 == k {print $2}' "$CG/memory.stat") >> 20)) MiB"; }
high=$((LIMIT / 100 * 90))
echo "after the file: $(cg_state)"
[ "$(cat "$usef")" -ge "$high" ] || skip "the cgroup's page cache did not stay near its limit ($(cg_state))"
"$HEAPINJECT" -p "$TPID" --duration 3 -o "$TMP/cache.txt" 2>"$TMP/cache.err"; rc=$?
echo "after the session: $(cg_state)"
cat "$TMP/cache.err"
[ "$rc" -eq 0 ] || fail "heapinject exited $rc, want 0"
[ "$(cat "$usef")" -ge "$high" ] || fail "the cgroup's usage fell below 90% during the session: not checked ($(cg_state))"
grep -q "short of memory" "$TMP/cache.err" &&
    fail "a pressure snapshot of a cgroup whose usage is page cache the kernel can take back: $(grep "short of memory" "$TMP/cache.err")"
grep -q '^NOTE' "$TMP/cache.txt" && fail "a NOTE in the report: $(grep '^NOTE' "$TMP/cache.txt")"
assert_alive "$TPID"
ok "a cgroup at its limit with page cache only: no pressure snapshot"
