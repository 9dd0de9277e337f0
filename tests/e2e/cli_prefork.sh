#!/usr/bin/env bash
# cli_prefork: a pre-fork server (a postmaster, an nginx master, a gunicorn
# arbiter in miniature) whose parent sits idle while its children allocate.
# Profiling the parent used to end in "no call reached the hooked malloc
# family" (or "profile for longer ... --rate 4K"), advice that cannot find
# the memory. The report now names the children, their pids and RSS, and
# how to profile one; following that advice gives stacks.
. "$(dirname "$0")/lib.sh"
start_target cli_prefork
mapfile -t KIDS < <(awk '/^child /{print $2}' "$TMP/cli_prefork.out")
[ "${#KIDS[@]}" = 3 ] || fail "the target did not say its 3 children: $(cat "$TMP/cli_prefork.out")"
PIDS+=("${KIDS[@]}")
timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --duration 1 >"$TMP/r.txt" 2>"$TMP/r.err" ||
    fail "the session failed: $(cat "$TMP/r.err")"
grep -q "^pid $TPID has 3 child processes" "$TMP/r.txt" || fail "the children are not said: $(cat "$TMP/r.txt")"
for k in "${KIDS[@]}"; do
    grep -Eq "^  pid $k +RSS +[0-9.]+ [KM]iB +cli_prefork$" "$TMP/r.txt" ||
        fail "child $k is not listed with its RSS: $(cat "$TMP/r.txt")"
done
grep -Eq "heapinject -p (${KIDS[0]}|${KIDS[1]}|${KIDS[2]})\b" "$TMP/r.txt" || fail "no advice to profile a child: $(cat "$TMP/r.txt")"
if grep -Eq 'no call reached the hooked|--rate|profile for longer|Profile for longer' "$TMP/r.txt"; then
    fail "the advice still speaks of sampling the parent: $(cat "$TMP/r.txt")"
fi
# The advice works: a child's session has stacks of its allocations.
timeout -k 5 120 "$HEAPINJECT" -p "${KIDS[1]}" --duration 1 --rate 4K >"$TMP/c.txt" 2>"$TMP/c.err" ||
    fail "the child's session failed: $(cat "$TMP/c.err")"
grep -q 'worker' "$TMP/c.txt" || fail "the child's profile has no stack through worker(): $(head -30 "$TMP/c.txt")"
assert_alive "$TPID"
for k in "${KIDS[@]}"; do assert_alive "$k"; done
if grep -q BAD "$TMP/cli_prefork.out"; then fail "a worker's data changed: $(grep BAD "$TMP/cli_prefork.out")"; fi
ok "an idle parent's report names its 3 children with pids and RSS and how to profile them"
