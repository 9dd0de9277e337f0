#!/bin/bash
# census_python.sh - `heapinject census` of CPython processes (issue 29):
# Covers: cli/census/libc_layout.c, cli/memory/smaps.c, cli/profile/read_census_python.c, injector/elfsym.c, injector/libpath.c, payload/census/py_walk.c, payload/serve/leave.c, payload/sys/dynelf.c, payload/sys/fmt.c
# the python section counts objects made before attach by type, exactly
# (within 1%): 50,000 instances of a class of the script's own, 7,000 of a
# __slots__ class, 2,000 of 656 bytes (glibc blocks, not pymalloc's),
# 20,000 dicts and 5,000 lists; classes named module.Class as Python prints
# them, in the text report too; the target's own checks pass after. On
# Debian's python3.11 (libpython inside the executable) and on pyenv's
# 3.8 and 3.13 (shared libpython) where they are installed. Honest edges:
# 3.7 (a layout not known) and the allocator's debug hooks (PYTHONMALLOC,
# -X dev) say why and
# count nothing; a mapping that faults when read (SIGBUS) is left out, the
# census goes on. `heapinject report` writes the section again from the JSON.
. "$(dirname "$0")/lib.sh"

SCRIPT="$ROOT/tests/e2e/census_python_target.py"

# py_start PYTHON [ENV...]: the target, ready; sets PYP.
py_start() {
    local py=$1; shift
    : >"$TMP/py.out"
    env "$@" "$py" ${PYOPTS:-} $SCRIPT >"$TMP/py.out" 2>"$TMP/py.err" &
    PYP=$!
    PIDS+=("$PYP")
    wait_for_line "$TMP/py.out" ready 60 || fail "$py did not get ready: $(cat "$TMP/py.err")"
}

# py_checked: the target checks its own data and says so.
py_checked() {
    kill -USR1 "$PYP"
    wait_for_line "$TMP/py.out" checked 60 || fail "$1: the target did not check its data: $(cat "$TMP/py.err")"
    grep -q "checked ok" "$TMP/py.out" || fail "$1: the target's own check failed after the census: $(cat "$TMP/py.out")"
    assert_alive "$PYP"
    [ -z "$(ps -o pid= --ppid "$PYP")" ] || fail "$1: the census left a child"
    kill "$PYP"
}

counted() { # counted PYTHON NAME: census in JSON, the counts checked
    local py=$1 name=$2
    py_start "$py"
    "$HEAPINJECT" census -p "$PYP" --format json -o "$TMP/$name.json" 2>"$TMP/$name.err" ||
        fail "$name: census failed: $(cat "$TMP/$name.err")"
    python3 - "$TMP/$name.json" "$name" <<'PYEOF' || fail "$name: the python section is wrong (above)"
import json, sys
c = json.load(open(sys.argv[1]))["census"]
name = sys.argv[2]
py = c.get("python")
def die(*why):
    print("FAIL:", *why)
    sys.exit(1)
if py is None:
    die("no python section in the census")
if not py["counted"]:
    die("not counted:", py["why"])
t = {r["type"]: r for r in py["types"]}
print("%s: CPython %s, %d objects (%d in %d pools, %d in glibc blocks), pools' used bytes %d of which objects %d, "
      "skipped pools %d" % (name, py["version"], py["objects"], py["pool_objects"], py["pools"],
                            py["malloc_objects"], py["pool_used_bytes"], py["pool_object_bytes"], py["pools_skipped"]))
print("  " + ", ".join("%s %s" % (k, t[k]["objects"] if k in t else None)
                       for k in ("__main__.Point", "__main__.Node", "__main__.Big", "dict", "list", "tuple")))
bad = []
def within(k, truth, lo_only=False):
    got = t[k]["objects"] if k in t else 0
    if got < truth * 0.99 or (not lo_only and got > truth * 1.01):
        bad.append("%s: %d objects, truth %d" % (k, got, truth))
within("__main__.Point", 50000)
within("__main__.Node", 7000)
within("__main__.Big", 2000)
# dicts and lists: the script's own, and the interpreter's (a few hundred
# to a few thousand; before 3.11 each Point has a __dict__ of its own)
instance_dicts = 50000 if tuple(map(int, py["version"].split(".")[:2])) < (3, 11) else 0
d = t.get("dict", {"objects": 0})["objects"] - instance_dicts
if not 20000 <= d <= 20000 * 1.05:
    bad.append("dict: %d objects (less %d instance dicts), want 20,000 and the interpreter's" % (d, instance_dicts))
l = t.get("list", {"objects": 0})["objects"]
if not 5000 <= l <= 5000 * 1.05:
    bad.append("list: %d objects, want 5,000 and the interpreter's" % l)
if t["__main__.Big"]["bytes"] < 2000 * 656:
    bad.append("Big: %d bytes for 2,000 656-byte objects" % t["__main__.Big"]["bytes"])
if not py["malloc_objects"] >= 5000 or not py["pool_objects"] >= 50000:
    bad.append("objects in glibc blocks %d (want 2,000 Big and 3,000 tuples), in pools %d" %
               (py["malloc_objects"], py["pool_objects"]))
if not 0 < py["pool_object_bytes"] <= py["pool_used_bytes"]:
    bad.append("objects' bytes in pools %d vs the pools' used %d" % (py["pool_object_bytes"], py["pool_used_bytes"]))
if bad:
    die("; ".join(bad))
PYEOF
    py_checked "$name"
    ok "$name: objects by type as made before attach"
}

DEBIAN=/usr/bin/python3.11
[ -x "$DEBIAN" ] || skip "no Debian python3.11"
counted "$DEBIAN" debian-3.11

# `heapinject report` writes the Python section again from the JSON.
"$HEAPINJECT" report "$TMP/debian-3.11.json" --format json -o "$TMP/again.json" || fail "report --format json failed"
cmp -s "$TMP/debian-3.11.json" "$TMP/again.json" ||
    fail "the census JSON written again differs: $(diff "$TMP/debian-3.11.json" "$TMP/again.json" | head -10)"
"$HEAPINJECT" report "$TMP/debian-3.11.json" >"$TMP/again.txt" || fail "report of the census JSON failed"
grep -Eq "50\.0k objects +__main__\.Point$" "$TMP/again.txt" ||
    fail "report of the census JSON lost the Python section: $(grep -A3 '^Python' "$TMP/again.txt")"
ok "report writes the Python section again, text and JSON"

# The text report lists the classes, module.Class.
py_start "$DEBIAN"
"$HEAPINJECT" census -p "$PYP" -o "$TMP/text.txt" 2>"$TMP/text.err" || fail "text census failed: $(cat "$TMP/text.err")"
sed -n '/^Python objects/,/Not seen/p' "$TMP/text.txt"
grep -q "^Python objects by type (CPython 3\.11\." "$TMP/text.txt" || fail "no Python section in the text report"
grep -Eq "50\.0k objects +__main__\.Point$" "$TMP/text.txt" || fail "the text report does not list 50.0k __main__.Point"
grep -Eq "7\.0k objects +__main__\.Node$" "$TMP/text.txt" || fail "the text report does not list 7.0k __main__.Node"
py_checked text
ok "the text report lists the classes"

# The allocator's debug hooks move every object: said, nothing counted.
py_start "$DEBIAN" PYTHONMALLOC=debug
"$HEAPINJECT" census -p "$PYP" --format json -o "$TMP/dbg.json" 2>"$TMP/dbg.err" || fail "census failed: $(cat "$TMP/dbg.err")"
python3 -c "
import json, sys; p = json.load(open(sys.argv[1]))['census']['python']
ok = not p['counted'] and 'PYTHONMALLOC=debug' in p['why'] and not p['types']
ok or print(p)
sys.exit(0 if ok else 1)" "$TMP/dbg.json" ||
    fail "PYTHONMALLOC=debug: counted, or no reason given"
py_checked debug-hooks
ok "PYTHONMALLOC=debug: not counted, and why"

# So does the development mode on the command line (python -X dev script).
PYOPTS="-X dev" py_start "$DEBIAN"
"$HEAPINJECT" census -p "$PYP" -o "$TMP/xdev.txt" 2>"$TMP/xdev.err" || fail "census failed: $(cat "$TMP/xdev.err")"
grep -q "^Python objects (CPython 3\.11\.[0-9]*): not counted: -X dev: " "$TMP/xdev.txt" ||
    fail "-X dev: counted, or no reason given: $(grep -A2 '^Python' "$TMP/xdev.txt")"
py_checked xdev
ok "-X dev: not counted, and why"

# A word that reads as an object whose type lies in a file's private
# mapping past the file's end (a read there is SIGBUS): the census goes on,
# the Python objects are counted without that mapping, and it says so.
cat >"$TMP/sigbus.py" <<'PYEOF'
import array, ctypes, mmap, signal, sys, tempfile, time
f = tempfile.NamedTemporaryFile(dir=sys.argv[1])
f.write(b"x" * 8192)
f.flush()
m = mmap.mmap(f.fileno(), 8192, flags=mmap.MAP_PRIVATE)
addr = ctypes.addressof(ctypes.c_char.from_buffer(m))
f.truncate(0)
# PyMem buffers whose words at +16 are a count of 1 and that address
fakes = [array.array("Q", [0, 0, 1, addr, 0, 0]) for _ in range(10)]
class Point:
    pass
points = [Point() for _ in range(10000)]
signal.signal(signal.SIGUSR1, lambda s, fr: print("checked", "ok" if len(points) == 10000 and
                                                  all(a[3] == addr for a in fakes) else "BAD", flush=True))
print("ready", flush=True)
while True:
    time.sleep(0.2)
PYEOF
SCRIPT_SAVED=$SCRIPT; SCRIPT="$TMP/sigbus.py $TMP"
py_start "$DEBIAN"
SCRIPT=$SCRIPT_SAVED
"$HEAPINJECT" census -p "$PYP" --format json -o "$TMP/bus.json" 2>"$TMP/bus.err" || fail "census with a SIGBUS mapping failed: $(cat "$TMP/bus.err")"
python3 -c "
import json, sys; p = json.load(open(sys.argv[1]))['census']['python']
t = {r['type']: r['objects'] for r in p['types']}
ok = p['counted'] and t.get('__main__.Point') == 10000 and 'faulted' in p['not_seen']
ok or print(p['counted'], p['why'], p['not_seen'], t.get('__main__.Point'))
sys.exit(0 if ok else 1)" "$TMP/bus.json" || fail "a mapping that faults: the Python objects not counted, or not said"
py_checked sigbus
ok "a mapping that faults when read: left out, said, the rest counted"

# A process that is not Python has no Python section (and its heap is
# left as it was: the interpreter is looked for without a malloc).
start_target census_array
"$HEAPINJECT" census -p "$TPID" --format json -o "$TMP/c.json" 2>"$TMP/c.err" || fail "census of a C program failed: $(cat "$TMP/c.err")"
"$HEAPINJECT" census -p "$TPID" -o "$TMP/c.txt" 2>"$TMP/c.err" || fail "census of a C program failed: $(cat "$TMP/c.err")"
python3 -c "import json, sys; sys.exit('python' in json.load(open(sys.argv[1]))['census'])" "$TMP/c.json" ||
    fail "a C program's census has a python section"
! grep -q "^Python" "$TMP/c.txt" || fail "a C program's census text has a Python section"
kill -USR1 "$TPID"
wait_for_line "$TMP/census_array.out" "data ok" 10 || fail "census_array's own check: $(cat "$TMP/census_array.out")"
ok "a C program: no Python section"

for v in 3.13 3.8; do
    py=$(ls -d /root/.pyenv/versions/$v.*/bin/python$v /opt/pyenv/versions/$v.*/bin/python$v 2>/dev/null | head -1)
    if [ -z "$py" ]; then echo "(no pyenv python$v here: not run)"; continue; fi
    counted "$py" "pyenv-$v"
done

py=$(ls -d /root/.pyenv/versions/3.7.*/bin/python3.7 /opt/pyenv/versions/3.7.*/bin/python3.7 2>/dev/null | head -1)
if [ -n "$py" ]; then
    py_start "$py"
    "$HEAPINJECT" census -p "$PYP" -o "$TMP/37.txt" 2>"$TMP/37.err" || fail "3.7: census failed: $(cat "$TMP/37.err")"
    grep "^Python objects" "$TMP/37.txt"
    grep -q "^Python objects (CPython 3\.7): not counted: .*3\.8 to 3\.13" "$TMP/37.txt" ||
        fail "3.7: no 'not counted' and why: $(grep -A2 '^Python' "$TMP/37.txt")"
    py_checked 3.7
    ok "3.7: not counted, and why"
fi
