#!/usr/bin/env bash
# mem_allocators: the same known-memory program (150 MiB held, 150 MiB
# freed, 64 MiB direct mmap) with jemalloc and with tcmalloc preloaded: the
# report names the allocator and shows its own figures (jemalloc: allocated,
# active, resident, mapped, retained, metadata, arenas; tcmalloc: allocated,
# heap size, free, released), the heap in use is the 150 MiB held, the
# direct mmap is told apart from the allocator's mappings, the parts add up
# to RSS. Each allocator frees differently (jemalloc decays freed extents,
# tcmalloc keeps spans), so heap_free is not checked against a truth here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
for lib in "$JE" "$TC"; do
    [ -e "$lib" ] || "$ROOT/scripts/deps.sh" >/dev/null 2>&1
    [ -e "$lib" ] || fail "$lib missing (scripts/deps.sh installs it)"
done

one() { # NAME LIB FIELDS...
    local name=$1 lib=$2; shift 2
    start_mem_truth "LD_PRELOAD=$lib" -- --inuse 150 --freed 150 --mmap 64
    local before; before=$(vmrss_bytes "$TPID")
    "$HEAPINJECT" -p "$TPID" --duration 1 --format json -o "$TMP/$name.json" 2>"$TMP/$name.err" ||
        fail "$name: heapinject -p: $(cat "$TMP/$name.err")"
    check_memory "$TMP/$name.json" memory "$before:$(vmrss_bytes "$TPID")" heap_in_use=150 mmap=64 allocator="$name" \
        readable=true || fail "$name: memory breakdown wrong"
    python3 - "$TMP/$name.json" "$@" <<'PY' || fail "$name: allocator figures missing"
import json, sys
a = json.load(open(sys.argv[1]))["memory"]["allocator"]
for f in sys.argv[2:]:
    assert f in a, f"{f} missing from {a}"
assert abs(a["in_use_bytes"] - 150 * 2**20) < 0.15 * 150 * 2**20, a
print(a)
PY
    "$HEAPINJECT" -p "$TPID" --duration 0.5 >"$TMP/$name.txt" 2>/dev/null || fail "$name: text report"
    grep -q "allocator: $name" "$TMP/$name.txt" || fail "$name: text report does not name it: $(sed -n '/^Memory/,/^$/p' "$TMP/$name.txt")"
    assert_alive "$TPID"
    kill -9 "$TPID"
}
one jemalloc "$JE" active_bytes resident_bytes mapped_bytes retained_bytes metadata_bytes arenas
one tcmalloc "$TC" mapped_bytes free_bytes unmapped_bytes resident_bytes
ok "jemalloc and tcmalloc named, their figures shown, heap and mmap within 15%"
