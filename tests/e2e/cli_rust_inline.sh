#!/usr/bin/env bash
# cli_rust_inline: a v0-mangled Rust program leaking from a function inlined
# ten deep. The report names the leaking line (inline_chain.rs, leak_l0's
# vec!) as the program's first frame, every name demangled, and Vec's
# inlined frames folded into one line that says how many it holds.
. "$(dirname "$0")/lib.sh"

RUSTC=$(command -v rustc || echo "$HOME/.cargo/bin/rustc")
[ -x "$RUSTC" ] || skip "no rustc on this machine"
SRC="$ROOT/tests/targets/rust/inline_chain.rs"
"$RUSTC" -g -O -C symbol-mangling-version=v0 "$SRC" -o "$TMP/inline_chain" 2>"$TMP/rustc.err" ||
    fail "rustc failed: $(cat "$TMP/rustc.err")"
LEAK_LINE=$(grep -n 'THE LEAK' "$SRC" | cut -d: -f1)
# The symbols really are v0 (so the test is about v0 demangling).
nm "$TMP/inline_chain" | grep -q ' _RNv' || fail "rustc did not emit v0 symbols"

"$TMP/inline_chain" >"$TMP/rust.out" 2>&1 &
TPID=$!; PIDS+=("$TPID")
wait_for_line "$TMP/rust.out" ready 10 || fail "the Rust target did not start"
"$HEAPINJECT" -p "$TPID" --duration 2 -q --rate 64K >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "heapinject failed on a Rust program: $(cat "$TMP/err.txt")"
cat "$TMP/report.txt"
awk '/^#1 /{top=1; next} /^#2 /{exit} /^$/{if (top) exit} top' "$TMP/report.txt" >"$TMP/top.txt"
# The program's innermost frame is the leaking line, among the 8 lines shown.
grep -qE "^ *inline_chain::leak_l0 +inline_chain\.rs:$LEAK_LINE \(inlined\)" "$TMP/top.txt" ||
    fail "the top stack does not show inline_chain::leak_l0 at inline_chain.rs:$LEAK_LINE"
grep -qE '^ *inline_chain::leak_l1 +inline_chain\.rs:' "$TMP/top.txt" || fail "leak_l1 (inlined caller) not shown"
# alloc's inlined frames (alloc::alloc, RawVec, Vec::with_capacity_in, ...)
# are folded into the library call the program made.
grep -qE '^ *alloc::vec::from_elem.*\(inlined; [0-9]+ library frames inlined in it folded\)' "$TMP/top.txt" ||
    fail "alloc's inlined frames were not folded into alloc::vec::from_elem"
grep -qE '(^|[ <])_R[0-9A-Za-z_]+' "$TMP/report.txt" && fail "v0-mangled Rust names left in the report"
assert_alive "$TPID"
assert_not_traced "$TPID"
ok "v0 Rust names demangled; the line leaking from a ten-deep inline chain is shown"
