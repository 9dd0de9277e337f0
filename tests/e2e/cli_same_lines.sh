#!/usr/bin/env bash
# cli_same_lines: two stacks whose first shown lines are the same (a
# shared chain of ten frames, parted only above the cut) used to be listed
# as #1 and #2 with identical text, reading as one stack counted twice.
# The later entry now says it shows the same lines as the earlier one and
# that the stacks differ below them. Also with --leaks.
. "$(dirname "$0")/lib.sh"
start_target cli_deepsame
for mode in plain leaks; do
    extra=(); [ "$mode" = leaks ] && extra=(--leaks)
    : >"$TMP/$mode.err"
    timeout -k 5 120 "$HEAPINJECT" -p "$TPID" --rate 4K --duration 2 "${extra[@]}" >"$TMP/$mode.txt" 2>"$TMP/$mode.err" &
    HI=$!
    wait_for_line "$TMP/$mode.err" 'attached to pid' 60 || fail "the session did not attach: $(cat "$TMP/$mode.err")"
    n0=$(grep -c '^allocated' "$TMP/cli_deepsame.out")
    kill -USR1 "$TPID"
    wait_for_line "$TMP/cli_deepsame.out" '^allocated' 30 || fail "the target did not allocate"
    wait "$HI" || fail "the $mode session failed: $(cat "$TMP/$mode.err")"
    # The two entries through d9: their shown lines are identical.
    awk '/^#1 /,/^$/' "$TMP/$mode.txt" | grep -q 'd7' || fail "$mode: #1 is not the deep stack: $(head -30 "$TMP/$mode.txt")"
    sed -n '/^#2 /,/^#3 \|^$/p' "$TMP/$mode.txt" | grep -q '(the same lines as #1 above: the two stacks part below them, at frame 1[0-9]: from_b here, from_a in #1)' ||
        fail "$mode: #2 reads like #1 without a word: $(sed -n '/^#1 /,/^$/p' "$TMP/$mode.txt")"
    if sed -n '/^#1 /,/^#2 /p' "$TMP/$mode.txt" | grep -q 'the same lines as'; then fail "$mode: #1 is said to repeat something"; fi
done
sed -n '/^#1 /,/^$/p' "$TMP/plain.txt"
kill -USR2 "$TPID"
wait_for_line "$TMP/cli_deepsame.out" '^data ' 10 || fail "the target did not check its data"
grep -q '^data ok' "$TMP/cli_deepsame.out" || fail "the target's data changed"
assert_alive "$TPID"
ok "two stacks with the same shown lines: the later entry says they differ below the cut"
