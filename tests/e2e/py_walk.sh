#!/bin/bash
# py_walk.sh - the payload's Python frame walker (payload/python/walk.c,
# lines.c, offsets.c; issue 29 item 1) reads a live thread's frames from
# outside (process_vm_readv), and from inside through the payload's own
# reader (read_self.c, the thread reading its own chain as a hook would),
# and names them exactly as the thread names itself (pl_python_find finds
# the interpreter by its exported symbols; a thread of ours without Python
# state reads none and says so; a function gone before it is named is
# still named from the payload's copies, payload/python/codes.c): a method (qualname Cache.grow), a generator, nested calls, file
# and line from each code's line table. On Debian's python3 (libpython in
# the executable) and every pyenv 3.8-3.13 installed; at least two needed.
# 3.7 is refused with a reason. The target's own check passes after.
. "$(dirname "$0")/lib.sh"

SCRIPT="$ROOT/tests/e2e/py_walk_target.py"
cc -std=gnu11 -D_GNU_SOURCE -I"$ROOT" -o "$TMP/dump" "$ROOT/tests/e2e/py_walk_dump.c" \
    "$ROOT"/build/pic/payload/python/{walk,lines,offsets}.o || fail "cannot build py_walk_dump"
cc -std=gnu11 -D_GNU_SOURCE -I"$ROOT" -shared -fPIC -o "$TMP/self.so" "$ROOT/tests/e2e/py_walk_self.c" \
    "$ROOT"/build/pic/payload/python/{walk,lines,offsets,read_self,python,codes}.o "$ROOT"/build/pic/payload/sys/dynelf.o || fail "cannot build py_walk_self"

# walk PYTHON: the walker's view of the stopped thread equals the thread's own.
walked=0
walk() {
    local py=$1 out="$TMP/out.$walked" fifo="$TMP/in.$walked"
    mkfifo "$fifo"
    PY_WALK_SELF="$TMP/self.so" "$py" "$SCRIPT" <"$fifo" >"$out" 2>"$TMP/err.$walked" &
    local pid=$!
    PIDS+=("$pid")
    exec 7>"$fifo"
    wait_for_line "$out" '^end$' 60 || fail "$py did not stop: $(cat "$TMP/err.$walked")"
    local ready tstate code str runtime minor
    read -r ready tstate code str runtime minor < <(grep '^ready ' "$out")
    sed -n '/^ready /,/^self$/p' "$out" | sed '1d;$d' >"$TMP/want.$walked"
    sed -n '/^self$/,/^other thread: /p' "$out" | sed '1d;$d' >"$TMP/self.$walked"
    diff "$TMP/want.$walked" "$TMP/self.$walked" >"$TMP/diff.$walked" ||
        fail "$py: the walker's frames from inside differ from the thread's own:
$(cat "$TMP/diff.$walked")"
    grep -q '^other thread: no Python state$' "$out" ||
        fail "$py: a thread without Python state: $(grep '^other thread' "$out")"
    "$TMP/dump" "$pid" "$tstate" "$code" "$str" "$runtime" "$minor" >"$TMP/got.$walked" ||
        fail "$py: $(cat "$TMP/got.$walked")"
    diff "$TMP/want.$walked" "$TMP/got.$walked" >"$TMP/diff.$walked" ||
        fail "$py: the walker's frames differ from the thread's own:
$(cat "$TMP/diff.$walked")"
    echo go >&7
    exec 7>&-
    wait_for_line "$out" '^checked$' 60 || fail "$py: the target's check failed: $(tail -2 "$out")"
    sed -n '/^gone: want$/,/^gone: named$/p' "$out" | sed '1d;$d' >"$TMP/gwant.$walked"
    sed -n '/^gone: named$/,/^gone: end$/p' "$out" | sed '1d;$d' >"$TMP/gnamed.$walked"
    grep -qx 'gone: code freed' "$out" || fail "$py: gone_soon's code was not freed"
    grep -q '^gone_soon (<gone>:2)$' "$TMP/gwant.$walked" || fail "$py: no gone_soon in $(cat "$TMP/gwant.$walked")"
    diff "$TMP/gwant.$walked" "$TMP/gnamed.$walked" >"$TMP/diff.$walked" ||
        fail "$py: a code object gone before it was named:
$(cat "$TMP/diff.$walked")"
    ok "$py (3.$minor): $(head -1 "$TMP/got.$walked") ... $(wc -l <"$TMP/got.$walked") frames"
    walked=$((walked + 1))
}

for py in /usr/bin/python3 /root/.pyenv/versions/3.{8,9,10,11,12,13}.*/bin/python3; do
    [ -x "$py" ] || continue
    walk "$py"
done
[ "$walked" -ge 3 ] || fail "fewer than three CPython versions to walk ($walked)"

out=$("$TMP/dump" 1 0x1000 0 0 0 7) && fail "3.7 accepted: $out"
grep -q "not supported" <<<"$out" || fail "3.7 refused without its reason: $out"
ok "3.7 refused: $out"
# Inside a 3.7, pl_python_find says why it reads nothing.
for py in /root/.pyenv/versions/3.7.*/bin/python3; do
    [ -x "$py" ] || continue
    out="$TMP/out.37"
    echo go | PY_WALK_SELF="$TMP/self.so" "$py" "$SCRIPT" >"$out" 2>"$TMP/err.37" || fail "3.7 target: $(cat "$TMP/err.37")"
    grep -qx 'refused: no Python frames: Python 3.7: this Python version is not supported (3.8 to 3.13 are)' "$out" ||
        fail "3.7 inside: $(sed -n '/^self$/,+1p' "$out")"
    grep -qx checked "$out" || fail "3.7 target's check failed"
    ok "3.7 inside: $(grep '^refused' "$out")"
done
