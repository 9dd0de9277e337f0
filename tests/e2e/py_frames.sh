#!/usr/bin/env bash
# py_frames: a sampled allocation on a thread running Python code carries
# Covers: cli/html/page.c, cli/link/client_stacks.c, cli/process/maps.c, cli/profile/read_json.c, cli/profile/stack_locs.c, cli/report/collapsed_names.c, cli/report/json.c, cli/report/python_note.c, cli/report/text.c, payload/python/codes.c, payload/python/lines.c, payload/python/offsets.c, payload/python/sample.c, payload/python/walk.c, payload/python/wire.c
# the thread's Python frames (issue 29 items 1, 3, 5): on Debian's python3
# (libpython in the executable) and pyenv's 3.8 and 3.13 (shared
# libpython), tests/targets/py_frames/app.py keeps bytearrays made in
# grow_cache, called by a generator, driven by an async function, run by a
# thread. Attached, every format names grow_cache (app.py:LINE) on the top
# live stack, at the marked line, above the interpreter's C frames, and
# --by function groups it like a native function. Threads without Python
# state (ctypes' pthread_create) get native frames and are counted in the
# report's Python line. An older client (no HI_SNAP_WANT_RUNTIME_FRAMES)
# gets native frames only. After detach every slot is restored and the
# target's own checks of what it kept pass. 3.7, not read, says why.
# Schedule: first (one of the longest: started early so that the lanes end together)
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/stress/rel_lib.bash"

cp "$ROOT/tests/targets/py_frames/app.py" "$TMP/app.py"
LINE=$(grep -n '# keep: bytes$' "$TMP/app.py" | cut -d: -f1)

# start PY NAME: app.py under PY in $TMP (co_filename "app.py"), ready.
start() {
    rm -f "$TMP/stop.$2"
    (cd "$TMP" && exec "$1" app.py "$TMP/stop.$2" >"$TMP/$2.out" 2>"$TMP/$2.err") &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TMP/$2.out" '^ready' 30 || fail "$1 did not get ready: $(cat "$TMP/$2.err")"
}

# finish NAME: the target stops, checks what it kept and exits 0.
finish() {
    touch "$TMP/stop.$1"
    wait "$TPID"; local rc=$?
    [ "$rc" = 0 ] && grep -q '^checked 2048 ok$' "$TMP/$1.out" && grep -q '^native [0-9]* ok$' "$TMP/$1.out" ||
        fail "$1: the target's checks failed (exit $rc): $(cat "$TMP/$1.out") $(tail -3 "$TMP/$1.err")"
}

# snap NAME: waits (collapsed snapshots: a second each) until the session
# holds samples of both the Python thread and the threads without Python
# state, then takes the JSON snapshot (slower: it looks debug packages up).
snap() {
    local i
    for ((i = 0; i < 60; i++)); do
        "$HEAPINJECT" snapshot -p "$TPID" --format collapsed -o "$TMP/$1.collapsed" 2>"$TMP/$1.serr" ||
            fail "$1: snapshot: $(cat "$TMP/$1.serr")"
        grep -q "grow_cache (app.py:$LINE)" "$TMP/$1.collapsed" && grep -q "strdup" "$TMP/$1.collapsed" && break
        sleep 0.2
    done
    "$HEAPINJECT" snapshot -p "$TPID" --format json -o "$TMP/$1.json" 2>"$TMP/$1.serr" ||
        fail "$1: snapshot: $(cat "$TMP/$1.serr")"
}

checked=0
run() {
    local py=$1 name=$2
    start "$py" "$name"
    local minor; minor=$(awk '/^ready/{print $3}' "$TMP/$name.out")
    "$HEAPINJECT" attach -p "$TPID" --rate 32K >/dev/null 2>"$TMP/$name.aerr" || fail "$name: attach: $(cat "$TMP/$name.aerr")"
    snap "$name"
    python3 "$ROOT/tests/e2e/py_frames_check.py" "$TMP/$name.json" "$LINE" "$minor" >"$TMP/$name.check" 2>&1 ||
        fail "$name (3.$minor): $(cat "$TMP/$name.check")"
    cat "$TMP/$name.check"
    for f in collapsed svg pprof heap; do
        "$HEAPINJECT" snapshot -p "$TPID" --format "$f" -o "$TMP/$name.$f" 2>"$TMP/$name.serr" ||
            fail "$name: snapshot --format $f: $(cat "$TMP/$name.serr")"
    done
    # text and html from the JSON read back (the Python line is kept)
    for f in text html; do
        "$HEAPINJECT" report "$TMP/$name.json" --format "$f" -o "$TMP/$name.$f" 2>"$TMP/$name.rerr" ||
            fail "$name: report --format $f: $(cat "$TMP/$name.rerr")"
    done
    "$HEAPINJECT" report "$TMP/$name.json" --by function --top 100 -o "$TMP/$name.byfn" 2>"$TMP/$name.rerr" ||
        fail "$name: report --by function: $(cat "$TMP/$name.rerr")"
    # text: the top stack shows grow_cache at its line; the Python line
    # says how many samples carry Python frames and why others do not.
    sed -n '/^#1 /,/^#2 /p' "$TMP/$name.text" | grep -Eq "^ +grow_cache +app\.py:$LINE\$" ||
        fail "$name: text's top stack has no grow_cache app.py:$LINE: $(sed -n '/^#1 /,/^#2 /p' "$TMP/$name.text")"
    grep -Eq "^  Python 3\.$minor: [0-9]+ of [0-9]+ samples carry Python frames.*[0-9]+ on threads running no Python code" \
        "$TMP/$name.text" || fail "$name: text has no Python line: $(grep Python "$TMP/$name.text")"
    # collapsed and svg: function (file:line); grow_cache's folded stack
    # runs fill > producer > grow_cache.
    grep -Eq ";fill \(app\.py:[0-9]+\);.*;producer \(app\.py:[0-9]+\);.*grow_cache \(app\.py:$LINE\);" \
        "$TMP/$name.collapsed" || fail "$name: collapsed: $(grep grow_cache "$TMP/$name.collapsed" | head -2)"
    grep -q "grow_cache (app.py:$LINE)" "$TMP/$name.svg" || fail "$name: svg has no grow_cache (app.py:$LINE)"
    grep -q "grow_cache" "$TMP/$name.html" && grep -q "app.py" "$TMP/$name.html" || fail "$name: html has no grow_cache"
    # pprof: read back, its Function and Line name the place.
    "$HEAPINJECT" report "$TMP/$name.pprof" -o "$TMP/$name.pprof.txt" 2>"$TMP/$name.rerr" ||
        fail "$name: report of the pprof: $(cat "$TMP/$name.rerr")"
    grep -Eq "^ +grow_cache +app\.py:$LINE\$" "$TMP/$name.pprof.txt" ||
        fail "$name: the pprof does not name grow_cache app.py:$LINE: $(sed -n '/^#1 /,/^#2 /p' "$TMP/$name.pprof.txt")"
    # heap (gperftools) holds addresses only: its stacks keep their native frames
    grep -q ' @ 0x' "$TMP/$name.heap" && ! grep -Eq ' 0x0[1-9a-f][0-9a-f]{14}' "$TMP/$name.heap" ||
        fail "$name: the heap profile holds a frame that is no address: $(grep -Eo ' 0x0[1-9a-f][0-9a-f]{14}' "$TMP/$name.heap" | head -2)"
    # --by function: Python functions are groups, named with their file.
    grep -Eq " grow_cache +\(app\.py\)\$" "$TMP/$name.byfn" && grep -Eq " producer +\(app\.py\)\$" "$TMP/$name.byfn" ||
        fail "$name: --by function has no grow_cache (app.py): $(grep -E 'grow|producer' "$TMP/$name.byfn")"
    if [ "$name" = debian ]; then
        # An older client asks without HI_SNAP_WANT_RUNTIME_FRAMES: native frames only.
        python3 "$ROOT/tests/e2e/proto_client.py" snapshot "/tmp/heapinject-$(id -u)/$TPID.sock" -o "$TMP/old.json" \
            2>"$TMP/old.err" || fail "old client's snapshot: $(cat "$TMP/old.err")"
        python3 - "$TMP/old.json" <<'PY' || fail "an older client got frames it cannot read"
import json, sys
d = json.load(open(sys.argv[1]))
words = [pc for b in d["buckets"] + d["mmap_buckets"] for pc in b["frames"]]
assert words and all(pc < 1 << 56 for pc in words), [hex(w) for w in words if w >= 1 << 56][:3]
print("old client: %d stacks, %d frames, all native" % (len(d["buckets"]) + len(d["mmap_buckets"]), len(words)))
PY
    fi
    "$HEAPINJECT" detach -p "$TPID" >/dev/null 2>"$TMP/$name.derr" || fail "$name: detach: $(cat "$TMP/$name.derr")"
    rel_untraced "$TPID"
    rel_hooks_gone "$TPID" >/dev/null
    finish "$name"
    ok "$name (3.$minor): $(grep -o 'Python 3.*' "$TMP/$name.text")"
    checked=$((checked + 1))
}

[ -x /usr/bin/python3 ] && run /usr/bin/python3 debian
for v in 3.8 3.13; do
    for py in /root/.pyenv/versions/$v.*/bin/python3; do
        [ -x "$py" ] && run "$py" "pyenv$v"
    done
done
[ "$checked" -ge 3 ] || fail "fewer than three CPython versions checked ($checked)"

# 3.7 is not read: native frames, and the report says why in one line.
for py in /root/.pyenv/versions/3.7.*/bin/python3; do
    [ -x "$py" ] || continue
    start "$py" py37
    "$HEAPINJECT" -p "$TPID" --duration 1 -q --rate 32K --format json -o "$TMP/py37.json" 2>"$TMP/py37.err" ||
        fail "3.7: $(cat "$TMP/py37.err")"
    "$HEAPINJECT" report "$TMP/py37.json" -o "$TMP/py37.text" 2>"$TMP/py37.err" || fail "3.7: report: $(cat "$TMP/py37.err")"
    grep -qx '  Python: no Python frames: Python 3.7: this Python version is not supported (3.8 to 3.13 are); stacks show the interpreter.s native frames only' \
        "$TMP/py37.text" || fail "3.7: no line saying why: $(grep -i python "$TMP/py37.text" | head -3)"
    ! grep -q "grow_cache" "$TMP/py37.text" || fail "3.7: Python frames where none are read"
    rel_untraced "$TPID"
    finish py37
    ok "3.7: $(grep -o 'Python: no.*' "$TMP/py37.text")"
done
