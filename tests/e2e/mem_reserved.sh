#!/usr/bin/env bash
# mem_reserved: memory of an allocator that reserves address space and
# commits it piece by piece, each piece behind a guard page (as Chromium's
# PartitionAlloc does with its 2 MiB super pages), is not called thread
# stacks, although the maps show it as a thread stack's pattern (rw-p right
# above ---p). mem_truth commits 32 MiB that way, maps 16 MiB directly
# (right after the reservation, so it sits above a ---p too) and runs a
# thread that touched 2 MiB of its stack and spins without a system call
# (no stack pointer in /proc/TID/syscall: only its TCB at the top of the
# mapping tells that it is a stack). `status` (not attached) and the
# one-shot report both show the 48 MiB under mmap and about 2 MiB of
# stacks. Before, 50 MiB were "stacks".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

start_mem_truth -- --inuse 8 --freed 0 --mmap 16 --reserved 32 --spinner 1
stacks_within() { # JSONFILE: stacks 2-3 MiB
    python3 - "$1" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))["memory"]["parts"]
s = p["stacks"] / 1048576
assert 2.0 <= s <= 3.0, f"stacks {s:.1f} MiB, truth 2 MiB and the main thread's few KiB"
PY
}
"$HEAPINJECT" status -p "$TPID" --format json >"$TMP/status.json" 2>"$TMP/status.err"; rc=$?
[ "$rc" -eq 7 ] || fail "status of a process not attached: exit $rc, want 7: $(cat "$TMP/status.err")"
check_memory "$TMP/status.json" memory "$(vmrss_bytes "$TPID")" mmap=48 heap_unsplit=8 ||
    fail "status: memory breakdown wrong"
stacks_within "$TMP/status.json" || fail "status: stacks wrong"
ok "status (not attached): 48 MiB under mmap, 2 MiB of stacks"

"$HEAPINJECT" -p "$TPID" --duration 0.5 --format json -o "$TMP/out.json" 2>"$TMP/cli.err" ||
    fail "heapinject -p: $(cat "$TMP/cli.err")"
check_memory "$TMP/out.json" memory "$(vmrss_bytes "$TPID")" mmap=48 heap_in_use=8 allocator=glibc ||
    fail "one-shot report: memory breakdown wrong"
stacks_within "$TMP/out.json" || fail "one-shot report: stacks wrong"
ok "one-shot report: 48 MiB under mmap, 2 MiB of stacks"
assert_alive "$TPID"
