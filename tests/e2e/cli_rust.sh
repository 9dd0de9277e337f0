#!/usr/bin/env bash
# cli_rust: a Rust program that grows through the system allocator: the
# leak is ranked first and Rust names are demangled (legacy and v0).
. "$(dirname "$0")/lib.sh"

RUSTC=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
[ -x "$RUSTC" ] || skip "no rustc on this machine"
"$RUSTC" -g -O -C symbol-mangling-version=v0 "$ROOT/tests/targets/rust/grow_cache.rs" -o "$TMP/grow_cache" 2>"$TMP/rustc.err" ||
    fail "rustc failed: $(cat "$TMP/rustc.err")"
"$TMP/grow_cache" >"$TMP/rust.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/rust.out" ready 10 || fail "the Rust target did not start"

"$HEAPINJECT" -p "$TPID" --duration 2 -q --rate 64K >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed on a Rust program: $(cat "$TMP/err.txt")"
cat "$TMP/report.txt"
# The top stack goes through the program's own function (frames under it
# may be alloc's, depending on inlining).
awk '/^#1 /{top=1; next} /^#2 /{exit} top' "$TMP/report.txt" | grep -q '^ *grow_cache::grow_cache ' ||
    fail "top stack does not go through grow_cache::grow_cache"
grep -q 'std::rt::lang_start_internal' "$TMP/report.txt" || fail "std's v0 name lang_start_internal not demangled"
# No name is left mangled, legacy or v0; v0 names with generic arguments
# (`::<...>`) or impls (`<Type>::method`) come out readable.
grep -q '_ZN\|17h[0-9a-f]\{16\}E' "$TMP/report.txt" && fail "legacy-mangled Rust names left in the report"
grep -qE '(^|[ <])_R[0-9A-Za-z_]+' "$TMP/report.txt" && fail "v0-mangled Rust names left in the report"
grep -qE '::<[^ ]*>|^ *<[a-z_:]+[A-Za-z_]*(<[^ ]*>)?>::' "$TMP/report.txt" ||
    fail "no v0 name with generic arguments or an impl in the report (were they demangled?)"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "Rust program profiled, names demangled"
