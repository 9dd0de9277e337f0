#!/usr/bin/env bash
# cli_hostile_comm: a process and a thread that name themselves with
# terminal escape sequences (issue 25 item 9). Their names are shown
# escaped once, as other names from the target are (\x1b), in --by thread,
# status and census: never raw, never '?' for one view and \x1b for the
# others, never escaped twice (\\x1b: the census header used to escape the
# already escaped process name again).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
ESC=$'\e' BEL=$'\a'

# shown FILE WHAT ESCAPED: FILE has no raw ESC or BEL, no doubled
# backslash escape, and holds ESCAPED.
shown() {
    if grep -q "[$ESC$BEL]" "$1"; then fail "$2: a raw escape reached the text: $(grep -n "[$ESC$BEL]" "$1" | cat -v | head -3)"; fi
    if grep -qF '\\x' "$1"; then fail "$2: a name escaped twice: $(grep -nF '\\x' "$1" | head -3)"; fi
    grep -qF "$3" "$1" || fail "$2: '$3' is missing: $(grep -n 'hi\|th' "$1" | cat -v | head -5)"
    ok "$2: $3"
}

rel_start cli_hostile_comm
"$HEAPINJECT" -p "$TPID" --rate 1K --duration 1.5 --by thread >"$TMP/by_thread.txt" 2>"$TMP/by_thread.err" ||
    fail "--by thread: $(cat -v "$TMP/by_thread.err")"
shown "$TMP/by_thread.txt" "--by thread" 'th\x1b]0;X\x07  (tid'
shown "$TMP/by_thread.err" "the session's messages" '(hi\x1b[31mred)'

"$HEAPINJECT" attach -p "$TPID" --rate 1K 2>"$TMP/attach.err" || fail "attach: $(cat -v "$TMP/attach.err")"
sleep 0.5
"$HEAPINJECT" status -p "$TPID" >"$TMP/status.txt" 2>"$TMP/status.err" || fail "status: $(cat -v "$TMP/status.err")"
shown "$TMP/status.txt" "status" 'th\x1b]0;X\x07'
"$HEAPINJECT" detach -p "$TPID" 2>/dev/null || fail "detach"

"$HEAPINJECT" census -p "$TPID" >"$TMP/census.txt" 2>"$TMP/census.err" || fail "census: $(cat -v "$TMP/census.err")"
shown "$TMP/census.txt" "census" "Census of pid $TPID (hi\\x1b[31mred)"
shown "$TMP/census.err" "census messages" '(hi\x1b[31mred)'

line=$(rel_cmd status '^status'); grep -q 'errors=0' <<<"$line" || fail "$line"
rel_quit
