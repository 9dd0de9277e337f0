#!/usr/bin/env bash
# rel_attach_while: attach at awkward moments. The target is starting and
# ending threads, forking (children allocate, check and exit 0), taking
# SIGALRM every millisecond, calling dlopen/dlclose in a loop (on a library
# whose GOT slots the profiler patches), or inside a long realloc chain
# (24 MiB grown and shrunk a few bytes at a time). For each: a one-shot
# `heapinject -p` session and then quick attach/snapshot/detach rounds
# (REL_ATTACH_ROUNDS, default 2; `make stress`: 10); the report shows the
# target's own functions, and afterwards the target is alive, untraced,
# every malloc-family GOT slot is back, its own checks found nothing wrong,
# and it exits 0 when told to.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

rel_build_dllib
ROUNDS=${REL_ATTACH_ROUNDS:-2}
sessions=0

# expect_fn MODE FILE FUNCTION: the report names FUNCTION.
expect_fn() {
    grep -q "$3" "$2" || fail "$1: report does not name $3: $(head -30 "$2")"
}

for mode in threads fork alarm dlopen realloc; do
    args=("$mode"); [ "$mode" = dlopen ] && args+=("$DLLIB")
    rel_start rel_busy "${args[@]}"
    sleep 0.3
    "$HEAPINJECT" -p "$TPID" --rate 16K --duration 1 -o "$TMP/$mode.txt" 2>"$TMP/$mode.cli" ||
        fail "$mode: session failed: $(cat "$TMP/$mode.cli")"
    sessions=$((sessions + 1))
    case $mode in
    realloc) expect_fn "$mode" "$TMP/$mode.txt" step_realloc ;;
    threads) expect_fn "$mode" "$TMP/$mode.txt" short_thread ;;
    *) expect_fn "$mode" "$TMP/$mode.txt" churn ;;
    esac
    rel_untraced "$TPID"
    for ((r = 1; r <= ROUNDS; r++)); do
        "$HEAPINJECT" attach -p "$TPID" --rate 4K >/dev/null 2>"$TMP/$mode.cli" ||
            fail "$mode: attach $r failed: $(cat "$TMP/$mode.cli")"
        sleep 0.2
        "$HEAPINJECT" snapshot -p "$TPID" -o "$TMP/$mode.$r.txt" 2>"$TMP/$mode.cli" ||
            fail "$mode: snapshot $r failed: $(cat "$TMP/$mode.cli")"
        "$HEAPINJECT" detach -p "$TPID" 2>"$TMP/$mode.cli" || fail "$mode: detach $r failed: $(cat "$TMP/$mode.cli")"
        sessions=$((sessions + 1))
        rel_untraced "$TPID"
        [ -z "$(rel_sock "$TPID")" ] || fail "$mode: socket left after detach"
    done
    line=$(rel_cmd status '^status')
    echo "$mode: $line"
    grep -q 'errors=0' <<<"$line" || fail "$mode: the target saw errors: $line; $(tail -5 "$TERR")"
    # Every malloc-family GOT slot is back to its original: nothing hooked.
    slots=$(rel_hooks_gone "$TPID") || exit 1
    echo "$mode: $slots GOT slots checked, none hooked"
    rel_quit
    ok "$mode: $sessions sessions so far, target intact"
done
echo "RESULT rel_attach_while sessions=$sessions modes=5 failures=0"
ok "attached during thread churn, fork, SIGALRM storm, dlopen/dlclose and a realloc chain"
