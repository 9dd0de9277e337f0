#!/usr/bin/env bash
# cli_output_killed: a heapinject killed while it writes a report leaves
# nothing behind: no partial FILE, no FILE.tmp.PID (these once reached
# 120-870 MB). The report is written into an unnamed file (O_TMPFILE) that
# gets its name only when whole; killed by SIGKILL, SIGTERM or SIGINT in the
# middle of writing its JSON, the directory stays empty, and an older
# FILE stays as it was. Where the filesystem has no O_TMPFILE (simulated by
# an LD_PRELOADed open() that refuses it), the named temporary is removed
# on SIGTERM, SIGINT and SIGHUP. A one-shot session killed with SIGKILL
# while it profiles leaves nothing either. The JSON of 8192 stacks is 5 MB
# since schema version 2 (it was 120 MB), written in a few milliseconds in
# about 670 writes of 8 KiB. The cli runs under strace, which lets its first
# 99 writes (stderr's lines and about 790 KB of the report) go at full
# speed and then holds each further write(2) for a second, so the file
# sits past 700 KB and short of its end for minutes: the signal surely
# lands in the middle of the writing, however slowly a loaded machine runs
# the poll. The cli is the tracer's child whose program is heapinject:
# strace forks short-lived children of its own to test ptrace before it
# starts the cli, and once the test took one of those for the cli and
# polled a process that was gone ("the writing was not seen", in two CI
# runs, while the cli wrote its report).
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"
command -v strace >/dev/null || skip "strace is needed to slow the report's writing down"

NOTMP="$TMP/notmpfile.so"
gcc -shared -fPIC -O1 -o "$NOTMP" "$ROOT/tests/e2e/cli_output_notmpfile.c" -ldl || fail "cannot build $NOTMP"

HI_EXE=$(readlink -f "$HEAPINJECT")
rel_start rel_bigsnap 13
"$HEAPINJECT" attach -p "$TPID" --rate 1 >/dev/null 2>"$TMP/err" || fail "attach: $(cat "$TMP/err")"
sleep 1

# kill_while_writing SIG WHAT [PRELOAD]: starts `snapshot -o $D/x.json`,
# waits until the file being written holds data, then sends SIG. Sets CLI.
kill_while_writing() {
    local sig=$1 what=$2 preload=${3:-} i size=0 f
    rm -rf "$D"; mkdir -p "$D"
    [ -n "${OLD:-}" ] && echo "$OLD" >"$D/x.json"
    # A script's background jobs start with SIGINT ignored: give it back
    # its default, as a terminal's Ctrl-C would find it. strace passes the
    # signals on to the cli and ends as the cli ended.
    env --default-signal=INT strace -f -o /dev/null -e trace=write -e inject=write:delay_exit=1000000:when=100+ \
        ${preload:+-E LD_PRELOAD="$preload"} \
        "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$D/x.json" 2>"$TMP/cli.err" &
    local tracer=$! c
    CLI=
    for ((i = 0; i < 250 && !CLI; i++)); do
        for c in $(pgrep -P "$tracer"); do
            [ "$(readlink "/proc/$c/exe" 2>/dev/null)" = "$HI_EXE" ] && CLI=$c
        done
        [ -n "$CLI" ] || sleep 0.02
    done
    [ -n "$CLI" ] || { kill -KILL "$tracer"; fail "$what: the cli did not start under strace ($(cat "$TMP/cli.err"))"; }
    for ((i = 0; i < 1200; i++)); do
        if [ -n "$preload" ]; then
            f=$(ls "$D" | grep '\.tmp\.' | head -1)
            [ -n "$f" ] && size=$(stat -c %s "$D/$f" 2>/dev/null || echo 0)
        else
            # The unnamed file is one of its descriptors: "D/#123 (deleted)".
            for f in /proc/$CLI/fd/*; do
                [[ "$(readlink "$f" 2>/dev/null)" == "$D/#"*"(deleted)" ]] && size=$(stat -L -c %s "$f" 2>/dev/null || echo 0)
            done
        fi
        [ "${size:-0}" -gt 700000 ] && break
        sleep 0.02
    done
    if [ "${size:-0}" -le 700000 ]; then
        kill -KILL "$CLI" "$tracer" 2>/dev/null
        fail "$what: the writing was not seen ($(cat "$TMP/cli.err"))"
    fi
    kill -"$sig" "$CLI"
    wait "$tracer"; local st=$?
    [ "$st" -eq $((128 + $(kill -l "$sig"))) ] || fail "$what: heapinject ended with status $st, not by SIG$sig"
    echo "$what: killed by SIG$sig with ${size} bytes written"
}

# nothing_left WHAT: the directory holds nothing but the older file.
nothing_left() {
    local left
    left=$(ls -A "$D" | grep -vx 'x.json')
    [ -z "$left" ] || fail "$1: left behind: $left ($(du -sh "$D" | cut -f1))"
    if [ -n "${OLD:-}" ]; then
        [ "$(cat "$D/x.json")" = "$OLD" ] || fail "$1: the older x.json was changed"
    else
        [ ! -e "$D/x.json" ] || fail "$1: a partial x.json was left ($(stat -c %s "$D/x.json") bytes)"
    fi
    ok "$1: nothing left behind"
}

D="$TMP/out"
for sig in KILL TERM INT; do
    OLD= kill_while_writing "$sig" "O_TMPFILE, SIG$sig"
    OLD= nothing_left "O_TMPFILE, SIG$sig"
done
OLD="an older report" kill_while_writing KILL "O_TMPFILE over an older file, SIGKILL"
OLD="an older report" nothing_left "O_TMPFILE over an older file, SIGKILL"

# Without O_TMPFILE: the named temporary exists while writing, and goes
# with the signals that would kill a process by default.
for sig in TERM INT HUP; do
    OLD= kill_while_writing "$sig" "no O_TMPFILE, SIG$sig" "$NOTMP"
    OLD= nothing_left "no O_TMPFILE, SIG$sig"
done
# ... and a whole report still gets its name, with no temporary left.
rm -rf "$D"; mkdir -p "$D"
LD_PRELOAD="$NOTMP" "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$D/x.json" 2>"$TMP/cli.err" ||
    fail "no O_TMPFILE: snapshot failed: $(cat "$TMP/cli.err")"
[ "$(ls -A "$D")" = x.json ] || fail "no O_TMPFILE: the directory holds $(ls -A "$D")"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$D/x.json" || fail "no O_TMPFILE: x.json is not whole"
ok "no O_TMPFILE: a whole report is renamed into place"
"$HEAPINJECT" detach -p "$TPID" >/dev/null 2>&1

# A one-shot session killed while it profiles: -o was opened at the start
# (unnamed), nothing has a name yet.
rm -rf "$D"; mkdir -p "$D"
"$HEAPINJECT" -p "$TPID" --duration 30 -q -o "$D/s.txt" 2>"$TMP/cli.err" &
CLI=$!
sleep 2
kill -KILL "$CLI"; wait "$CLI"
[ -z "$(ls -A "$D")" ] || fail "session killed: left $(ls -A "$D")"
ok "a session killed with SIGKILL leaves nothing"
assert_alive "$TPID"
