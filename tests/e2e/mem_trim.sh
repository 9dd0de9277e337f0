#!/usr/bin/env bash
# mem_trim: `heapinject trim -p PID` on a program that freed 200 MiB in the
# Covers: cli/cmd/trim.c, cli/link/client_memory.c
# middle of its heap (held blocks below and above, so free() alone could
# not give it back): RSS drops by most of the 200 MiB, the output says RSS
# before and after and how long the call took, heapinject detaches, and the
# program runs on with every held block intact and can allocate again. A
# second trim, with a profiler already attached, leaves it attached. The
# RSS printed before and after is the process's own VmRSS then.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/mem_lib.bash"

# printed_like_vmrss OUT WHICH BYTES: the RSS that trim's output OUT prints
# as WHICH (before, after) is BYTES (VmRSS as this test read it) give or
# take half the printed figure's last digit and 1 MiB: the cli reads RSS
# with its agent loaded; the agent's own pages (about 40 KiB measured) are
# given back at detach, before this test reads VmRSS.
printed_like_vmrss() {
    python3 - "$@" <<'PY' || fail "trim's printed RSS $2 is not the process's VmRSS: see above"
import re, sys
text, which, truth = open(sys.argv[1]).read(), sys.argv[2], int(sys.argv[3])
m = re.search(r"RSS ([0-9.]+) (B|KiB|MiB|GiB) -> ([0-9.]+) (B|KiB|MiB|GiB) \(", text)
assert m, f"no 'RSS X -> Y' in {text!r}"
unit = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
num, u = (m.group(1), m.group(2)) if which == "before" else (m.group(3), m.group(4))
shown = float(num) * unit[u]
digits = len(num.split(".")[1]) if "." in num else 0
slack = 0.5 * 10 ** -digits * unit[u] + (1 << 20)
assert abs(shown - truth) <= slack, \
    f"trim printed RSS {which} {num} {u}, VmRSS was {truth / 2**20:.1f} MiB (more than {slack / 2**20:.2f} MiB apart)"
print(f"RSS {which}: printed {num} {u}, VmRSS {truth / 2**20:.2f} MiB")
PY
}

start_mem_truth -- --inuse 16 --freed 200 --mmap 0 --layout middle
before=$(vmrss_bytes "$TPID")
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim.out" 2>"$TMP/trim.err" || fail "trim: $(cat "$TMP/trim.out" "$TMP/trim.err")"
cat "$TMP/trim.out"
after=$(vmrss_bytes "$TPID")
drop=$((before - after))
echo "VmRSS $before -> $after (dropped $drop)"
[ "$drop" -ge $((160 << 20)) ] || fail "RSS dropped by $drop bytes, want most of 200 MiB"
printed_like_vmrss "$TMP/trim.out" before "$before"
printed_like_vmrss "$TMP/trim.out" after "$after"
grep -Eq "glibc malloc_trim\(0\) took .*; RSS .* -> .* \(-" "$TMP/trim.out" || fail "trim output lacks RSS before/after and time"
grep -q "detached" "$TMP/trim.out" || fail "trim does not say it detached"
sleep 0.3
assert_alive "$TPID"
assert_not_traced "$TPID"
[ ! -e "/tmp/heapinject-$(id -u)/$TPID.sock" ] || fail "socket left behind"
kill -USR1 "$TPID"
wait_for_line "$TMP/mem_truth.out" "^verify" 10 || fail "the program did not verify its data"
grep -q "^verify ok 256" "$TMP/mem_truth.out" || fail "data damaged: $(grep verify "$TMP/mem_truth.out")"

# With a profiler attached: used, and left attached.
"$HEAPINJECT" attach -p "$TPID" -q || fail "attach"
"$HEAPINJECT" trim -p "$TPID" >"$TMP/trim2.out" 2>&1 || fail "trim while attached: $(cat "$TMP/trim2.out")"
grep -q "detached" "$TMP/trim2.out" && fail "trim detached a profiler it did not attach"
"$HEAPINJECT" status -p "$TPID" --interval 0.1 >/dev/null || fail "the profiler is gone after trim"
"$HEAPINJECT" detach -p "$TPID" -q || fail "detach"
assert_alive "$TPID"
ok "trim gave back $((drop >> 20)) MiB of 200, data intact, detached"
