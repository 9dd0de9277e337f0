#!/usr/bin/env bash
# payload_jemalloc.sh - a second allocator family (jemalloc) without redis:
# build/targets/pl_jemalloc with a library linked against libjemalloc.so.2
# that it dlopen()s with RTLD_DEEPBIND, so the executable's malloc slots
# bind to glibc and the library's to jemalloc (two families in one
# process), then the same with jemalloc preloaded (every module's slots
# bind to jemalloc). At RATE=1 each module's allocations are counted
# exactly; while attached and after detach each module's malloc still goes
# to its own allocator (the allocators' own counters say so); after detach
# every malloc-family GOT slot holds exactly its old value.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/payload_lib.bash"
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
[ -e "$JE" ] || fail "$JE missing (scripts/deps.sh installs libjemalloc2)"
JELIB="$TMP/libjeuser.so"
gcc -shared -fPIC -O1 -g -fno-omit-frame-pointer -o "$JELIB" "$ROOT/tests/e2e/payload_jeuser.c" "$JE" ||
    fail "cannot build $JELIB"
# Debian's jemalloc uses initial-exec TLS: dlopen()ed, it needs more static
# TLS than glibc keeps spare by default.
export GLIBC_TUNABLES=glibc.rtld.optional_static_tls=65536

check_families() { # EXPECTED WHEN
    local got; got=$(pl_cmd check '^check ')
    [ "$got" = "check $1" ] || fail "$2: $got, expected: check $1"
    echo "  $2: $got"
}

for mode in mixed preload; do
    echo "$mode:"
    if [ "$mode" = preload ]; then
        LD_PRELOAD=libjemalloc.so.2 pl_start pl_jemalloc "$JELIB"
        want="exe=jemalloc lib=jemalloc"
    else
        pl_start pl_jemalloc "$JELIB"
        want="exe=glibc lib=jemalloc"
    fi
    check_families "$want" "before attach"
    pl_got_dump "$TMP/got.before"
    pl_attach "$(pl_config rate=1)"
    pl_cmd run '^done run' >/dev/null
    pl_snapshot "$TMP/s1.json"
    pl_expect_exact "$TMP/s1.json" exe_keep --top
    pl_expect_exact "$TMP/s1.json" je_keep --top # (so both modules' slots were hooked)
    check_families "$want" "attached"
    $CLIENT detach "$SOCK" >/dev/null || fail "DETACH failed"
    pl_got_dump "$TMP/got.after"
    diff "$TMP/got.before" "$TMP/got.after" || fail "$mode: GOT slots not restored exactly after DETACH"
    echo "  $(wc -l <"$TMP/got.after") malloc-family slots restored exactly"
    check_families "$want" "after detach"
    pl_cmd release '^done release' >/dev/null
    assert_alive "$TPID"
    kill "$TPID"
done
ok "jemalloc family (DEEPBIND library beside glibc, and preloaded): exact counts, calls forwarded to each slot's own allocator, every slot restored"
