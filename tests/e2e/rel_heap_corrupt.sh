#!/usr/bin/env bash
# rel_heap_corrupt: a program with a latent heap corruption it never
# touches again (a fastbin that loops after free(a), free(b), free(a) with
# the tcache full) lives for ever alone; attach and census used to abort
# it inside the injected dlopen's malloc (SIGABRT, issue 25 item 8). The
# heap is now read from outside first (main_arena's fastbins and unsorted
# bin, the main thread's tcache): refused with the reason, exit 5, nothing
# loaded, the target alive with its data intact.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

# The check needs libc's debug information (main_arena's address).
dbg=$(ls /usr/lib/debug/.build-id 2>/dev/null | head -1)
[ -n "$dbg" ] || skip "no libc debug information (libc6-dbg)"

refused() {
    local name=$1; shift
    "$HEAPINJECT" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    local rc=$?
    echo "$name: exit $rc: $(cat "$TMP/$name.err")"
    sleep 0.2
    assert_alive "$TPID"
    [ "$rc" = 5 ] || fail "$name: exit $rc, want 5"
    grep -q "heap is corrupt: main_arena's fastbin of 32-byte chunks: the list loops" "$TMP/$name.err" ||
        fail "$name: the reason is not said"
    grep -q "Nothing was done" "$TMP/$name.err" || fail "$name: does not say nothing was done"
    rel_untraced "$TPID"
    grep -q libheapinject "/proc/$TPID/maps" && fail "$name: the library is mapped"
    line=$(rel_cmd status '^status')
    grep -q 'errors=0' <<<"$line" || fail "$name: $line"
}

rel_start rel_heap_cycle
refused attach attach -p "$TPID"
refused census census -p "$TPID"
refused session -p "$TPID" --duration 1 -o "$TMP/never.txt"
[ ! -e "$TMP/never.txt" ] || fail "a report was written"
rel_quit
ok "a heap whose fastbin loops is refused before anything is loaded; the process lives on"
