#!/usr/bin/env bash
# cli_report: saved profiles come back: `report` re-renders one in another
# Covers: cli/cmd/report.c, cli/memory/json_read.c, cli/profile/read_heap.c
# format, `diff` shows what grew between two snapshots, a foreign file is
# refused with exit 9.
. "$(dirname "$0")/lib.sh"
H=$HEAPINJECT

start_target cli_leaky --steady 4000000
"$H" attach -p "$TPID" --rate 32K -q || fail "attach failed"
"$H" snapshot -p "$TPID" --format json -o "$TMP/a.json" -q || fail "snapshot a"
sleep 1.5
"$H" snapshot -p "$TPID" --format heap -o "$TMP/b.heap" -q || fail "snapshot b"
"$H" detach -p "$TPID" -q || fail "detach"

"$H" report "$TMP/b.heap" --format collapsed >"$TMP/b.folded" 2>"$TMP/r.err" || fail "report: $(cat "$TMP/r.err")"
grep -q "main;leak_steady [0-9]" "$TMP/b.folded" || fail "collapsed from a heap file lacks leak_steady: $(cat "$TMP/b.folded")"
"$H" diff "$TMP/a.json" "$TMP/b.heap" >"$TMP/diff.txt" 2>"$TMP/d.err" || fail "diff: $(cat "$TMP/d.err")"
grep -q "^NOTE: growth from" "$TMP/diff.txt" || fail "diff note missing"
awk '/^#1 /{f=1;next} /^#2 /{f=0} f' "$TMP/diff.txt" | grep -q "leak_steady" ||
    fail "diff does not rank the steady leak first: $(head -30 "$TMP/diff.txt")"
"$H" report /etc/hostname >/dev/null 2>"$TMP/bad.err"; rc=$?
[ "$rc" -eq 9 ] || fail "report of a foreign file exited $rc, want 9"
grep -q "not a heapinject profile" "$TMP/bad.err" || fail "message: $(cat "$TMP/bad.err")"
"$H" report "$TMP/nonexistent.json" 2>/dev/null; rc=$?
[ "$rc" -eq 1 ] || fail "report of a missing file exited $rc, want 1"
ok "report and diff of saved profiles"
