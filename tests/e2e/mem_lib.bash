# mem_lib.bash - helpers for the memory breakdown tests (sourced after lib.sh).

# start_mem_truth [ENV=VAL...] -- ARGS: starts mem_truth (optionally with
# environment settings such as LD_PRELOAD=...), waits for "ready"; sets TPID.
start_mem_truth() {
    local envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    [ "${1:-}" = -- ] && shift
    env "${envs[@]}" "$TARGETS/mem_truth" "$@" >"$TMP/mem_truth.out" 2>"$TMP/mem_truth.err" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/mem_truth.out" ready 30 || fail "mem_truth did not get ready: $(cat "$TMP/mem_truth.err")"
}

# check_memory JSONFILE KEYPATH VMRSS|LO:HI [TRUTH...]: the "memory" object (at KEYPATH
# in the file: "memory") adds up to its RSS and to VmRSS within 5%; each
# TRUTH is part=MiB (VMRSS 0: a growing process, not compared) and must be within 15%; allocator=NAME checks the name.
check_memory() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
m = d[sys.argv[2]]
parts = m["parts"]
for k in ("heap_in_use", "heap_free", "mmap", "stacks", "files", "other"):
    assert k in parts, f"part {k} missing: {parts}"
total = sum(parts.values())
rss = m["rss_bytes"]
assert total == rss, f"parts add up to {total}, rss_bytes is {rss}"
# VmRSS is read after the session: the profiler's own pages, in the report's
# RSS, have been given back by then (detach releases its tables). "LO:HI" is
# VmRSS before and after the session, for an allocator that purges or grows
# by itself meanwhile (jemalloc's decay): the parts must lie within 5% of
# that range.
vm = [int(x) for x in sys.argv[3].split(":")]
lo, hi = min(vm), max(vm)
own = d.get("totals", {}).get("profiler_bytes", 0)
assert hi == 0 or lo * 0.95 - own <= total <= hi * 1.05 + own, f"parts {total} vs VmRSS {sys.argv[3]}: more than 5% (+ profiler {own}) apart"
print("parts (MiB):", {k: round(v / 1048576, 1) for k, v in parts.items()}, "rss", round(rss / 1048576, 1))
for t in sys.argv[4:]:
    k, v = t.split("=")
    if k == "allocator":
        assert m["allocator"]["name"] == v, f"allocator {m['allocator']}, want {v}"
        continue
    if k == "readable":
        assert m["allocator"]["readable"] == (v == "true"), m["allocator"]
        continue
    want = float(v) * 1048576
    got = parts[k]
    assert abs(got - want) <= 0.15 * want, f"{k}: {got / 1048576:.1f} MiB, truth {v} MiB (more than 15% off)"
assert isinstance(m["notes"], list)
PY
}

vmrss_bytes() { awk '/^VmRSS:/{print $2 * 1024}' "/proc/$1/status"; }
