# py_codes_lib.bash - sourced by py_edges and py_fork_codes (after lib.sh):
# where the payload's table of code objects (pl_py_codes, which names Python
# frames) is in a process, and whether a mapping holds an address, so a
# test can say that no mapping of ours is left.
LIB="$ROOT/build/libheapinject.so"
CODES_OFF=$(nm "$LIB" | awk '$3 == "pl_py_codes" { print $1 }')
[ -n "$CODES_OFF" ] || fail "no pl_py_codes symbol in $LIB"

# codes_table PID: the address of the payload's table of code objects (0: none).
codes_table() {
    python3 - "$1" "$CODES_OFF" <<'PY'
import sys
pid, off = int(sys.argv[1]), int(sys.argv[2], 16)
base = None
for ln in open("/proc/%d/maps" % pid):
    f = ln.split()
    if len(f) >= 6 and f[5].endswith("libheapinject.so") and int(f[2], 16) == 0:
        base = int(f[0].split("-")[0], 16)
        break
assert base is not None, "libheapinject.so is not mapped"
with open("/proc/%d/mem" % pid, "rb") as m:
    m.seek(base + off)
    print("%x" % int.from_bytes(m.read(8), "little"))
PY
}

# mapped PID HEXADDR: status 0 when a mapping of PID holds the address.
mapped() {
    python3 - "$1" "$2" <<'PY'
import sys
a = int(sys.argv[2], 16)
for ln in open("/proc/%s/maps" % sys.argv[1]):
    lo, hi = (int(x, 16) for x in ln.split()[0].split("-"))
    if lo <= a < hi:
        sys.exit(0)
sys.exit(1)
PY
}
