#!/usr/bin/env bash
# cli_help_exit: --help and README agree on what exit status 8 means, and
# both say what the code does (cli/link/attach.c maps only the
# injector's "no thread reached a safe point" to 8): --help used to call
# it "timeout", which reads as any timeout (the agent's, a session's).
. "$(dirname "$0")/lib.sh"
"$HEAPINJECT" --help >"$TMP/help.txt" 2>&1 || fail "--help failed"
readme=$(sed -n 's/^| 8 | \(.*\) |$/\1/p' "$ROOT/README.md")
[ -n "$readme" ] || fail "README has no row for exit status 8"
tr '\n' ' ' <"$TMP/help.txt" | sed 's/  */ /g' >"$TMP/help1.txt"
grep -q "8 $readme" "$TMP/help1.txt" || fail "--help does not say '8 $readme': $(grep -A4 'Exit status' "$TMP/help.txt")"
if grep -q '8 timeout' "$TMP/help1.txt"; then fail "--help still says '8 timeout'"; fi
grep -q 'INJ_ETIMEOUT: return CLI_EXIT_TIMEOUT' "$ROOT/cli/link/attach.c" ||
    fail "exit 8 no longer comes from the injector's safe-point timeout: update --help and README"
ok "--help and README: exit 8 is 'no safe point in time'"
