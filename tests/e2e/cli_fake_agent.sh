#!/usr/bin/env bash
# cli_fake_agent: the agent's socket served by something else (the target's
# user can bind it), talking to a cli that may run as root
# (tests/e2e/fake_agent.py serves the socket of its own pid, so the cli's
# SO_PEERCRED check passes).
#  1. A peer that claims 10 M stacks and sends them without end, or stacks
#     of 128 frames, threads, maps lines, one maps line without end, or
#     census groups without end, or stack nodes without end: the cli stops
#     at its bound with a message
#     that names it (exit 1), and its peak RSS stays bounded (it grew to
#     3.3 GB on 10 M stacks; 738 MiB on empty stacks, 789 MiB on census
#     groups before the bounds).
#  2. A peer whose maps text names a FIFO, a library whose name holds
#     terminal escape sequences, and libraries whose .gnu_debuglink names a
#     FIFO (libdw opens debug files with a plain open(), which waits for a
#     writer for ever): the snapshot is written, the libraries' functions
#     named, every name escaped (\x1b) in text, escaped by JSON's rules in
#     JSON.
# Schedule: first (one of the longest: started early so that the lanes end together)
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed for the fake agent"
[ -x /usr/bin/time ] || skip "/usr/bin/time (GNU time) is needed to measure the cli's peak RSS"
FAKE=""

start_fake() { # KIND [ARG]: sets FPID
    rm -f "$TMP/ready"
    python3 "$ROOT/tests/e2e/fake_agent.py" "$1" "$TMP/ready" "${2:-}" 2>"$TMP/fake.err" &
    FAKE=$!
    PIDS+=("$FAKE")
    for _ in $(seq 100); do [ -s "$TMP/ready" ] && break; sleep 0.05; done
    FPID=$(cat "$TMP/ready" 2>/dev/null) || fail "the fake agent did not start: $(cat "$TMP/fake.err")"
}
stop_fake() {
    kill -TERM "$FAKE" 2>/dev/null
    wait "$FAKE" 2>/dev/null
}

# --- 1. floods ---------------------------------------------------------------
# KIND BOUND MAX_RSS_MIB [COMMAND]: the message names BOUND; peak RSS below MAX_RSS_MIB
# (each bound is about twice what a real agent sends: cli/link/client.h).
while IFS='|' read -r kind bound max_mib cmd; do
    start_fake "$kind"
    /usr/bin/time -f "maxrss_kb=%M" -o "$TMP/time.$kind" \
        timeout -s KILL 120 "$HEAPINJECT" "${cmd:-snapshot}" -p "$FPID" >"$TMP/$kind.out" 2>"$TMP/$kind.err"
    rc=$?
    stop_fake
    kb=$(sed -n 's/^maxrss_kb=//p' "$TMP/time.$kind")
    echo "$kind: exit $rc, peak RSS $((kb / 1024)) MiB: $(cat "$TMP/$kind.err")"
    [ "$rc" = 1 ] || fail "$kind: exit $rc, want 1 (a failed request)"
    grep -qF "$bound, the bound" "$TMP/$kind.err" || fail "$kind: the message does not name the bound ($bound)"
    grep -q "is the socket served by something else" "$TMP/$kind.err" || fail "$kind: the message does not say what it means"
    [ -n "$kb" ] && [ "$kb" -lt $((max_mib * 1024)) ] || fail "$kind: peak RSS ${kb:-?} KiB, the bound is $max_mib MiB"
    ok "$kind: refused at '$bound', peak RSS $((kb / 1024)) MiB (< $max_mib)"
done <<'K'
buckets|more than 524288 stacks|160
big|larger than 192 MiB|300
threads|more than 65536 threads|64
maps_lines|more than 1048576 lines of maps|128
maps_line|longer than 8192 bytes|64
census|larger than 64 MiB|128|census
nodes|more than 2097152 stack nodes|160
K

# Stack nodes that cannot be (issue 17): refused with the reason, exit 1.
while IFS='|' read -r kind words; do
    start_fake "$kind"
    timeout -s KILL 60 "$HEAPINJECT" snapshot -p "$FPID" >"$TMP/$kind.out" 2>"$TMP/$kind.err"
    rc=$?
    stop_fake
    [ "$rc" = 1 ] || fail "$kind: exit $rc, want 1: $(cat "$TMP/$kind.err")"
    grep -qF "$words" "$TMP/$kind.err" || fail "$kind: the message does not say '$words': $(cat "$TMP/$kind.err")"
    ok "$kind: refused ($(head -c 160 "$TMP/$kind.err"))"
done <<'K'
deep_nodes|deeper than 128 frames
unsent_node|names node 7, not sent
depth_lie|says 3 frames, its node 1 has 1
K

# --- 2. the files a peer names ------------------------------------------------
ESC=$'\e' BEL=$'\a'
D="$TMP/libs"
mkdir -p "$D"
# No -g: the symbolizer then looks for the debug file the library names.
build_hostile_lib "$D/libdl.so"
fifo_debuglink "$D/libdl.so"
mkfifo "$D/fifo.so"
NAME="libhi${ESC}]0;PWNED${BEL}${ESC}[31mred.so"
cp "$D/libdl.so" "$D/$NAME"
off=$(nm "$D/libdl.so" | awk '$3 == "hostile_keep" { print $1 }')
[ -n "$off" ] || fail "no hostile_keep in the library"
start_fake modules "$D/fifo.so:$D/libdl.so@$off:$D/$NAME@$off"
for view in text module json; do
    case $view in
    text) args=() ;;
    module) args=(--by module) ;;
    json) args=(--format json -o "$TMP/r.json") ;;
    esac
    timeout -s KILL 60 "$HEAPINJECT" snapshot -p "$FPID" "${args[@]}" >"$TMP/m.$view" 2>"$TMP/m.$view.err"
    rc=$?
    [ "$rc" = 137 ] && fail "$view: the cli hung on a FIFO the peer named (killed after 60 s)"
    [ "$rc" = 0 ] || fail "$view: exit $rc: $(cat -v "$TMP/m.$view.err")"
    if grep -q "[$ESC$BEL]" "$TMP/m.$view" "$TMP/m.$view.err"; then
        fail "$view: a raw escape sequence reached the terminal: $(grep -h "[$ESC$BEL]" "$TMP/m.$view" "$TMP/m.$view.err" | cat -v | head -3)"
    fi
done
stop_fake
grep -cE '^ +hostile_keep +lib' "$TMP/m.text" | grep -qx 2 || fail "the two libraries' hostile_keep are not both named: $(cat -v "$TMP/m.text")"
grep -qF 'hostile_keep                             libhi\x1b]0;PWNED\x07\x1b[31mred.so' "$TMP/m.text" ||
    fail "the escaped library name is missing from the text report: $(cat -v "$TMP/m.text")"
grep -qF 'fifo.so' "$TMP/m.text" || fail "the FIFO's frame is missing"
grep -qF "$D/libhi\\x1b]0;PWNED\\x07\\x1b[31mred.so" "$TMP/m.module" ||
    fail "--by module does not show the escaped path: $(cat -v "$TMP/m.module")"
grep -qF '\x1b' "$TMP/r.json" && fail "the JSON profile escapes like text (\\x1b), not by JSON's rules"
python3 - "$TMP/r.json" "$NAME" <<'PY' || fail "the JSON profile does not hold the library's real name"
import json, sys
doc = json.load(open(sys.argv[1]))
assert "/" + sys.argv[2] + "\n" in doc["maps"], "name not found"
PY
ok "a FIFO and debuglinks to FIFOs named by the peer: no hang, functions named, names escaped"
