#!/usr/bin/env bash
# cli_symbols: what the symbolizer shows a user: demangled C++ names; and a
# program whose executable was deleted after it started keeps its function
# names (read through /proc/PID/map_files) with the module marked deleted.
# Every stack goes down to where its thread began: the main thread's to
# _start, a thread's to its start routine and the clone that made it.
. "$(dirname "$0")/lib.sh"

# whole_stacks FILE: every stack in the JSON report FILE ends in _start
# (after __libc_start_main) or in a thread's clone (after start_thread).
whole_stacks() {
    python3 - "$1" <<'PY' || fail "a stack of $1 does not go down to where its thread began"
import hi_profile, sys
d = hi_profile.load(sys.argv[1])
assert d["stacks"], "no stacks"
ends = {("__libc_start_main", "_start"), ("start_thread", "__clone3"), ("start_thread", "__clone")}
for s in d["stacks"]:
    last = tuple(f.get("function") for f in s["frames"][-2:])
    assert last in ends, f"a stack ends in {' < '.join(str(n) for n in last)}, not in _start or a thread's clone: " + \
        " < ".join(str(f.get("function")) for f in s["frames"])
print(f"{len(d['stacks'])} stacks, each down to _start or a thread's clone")
PY
}

start_target cli_cxx
"$HEAPINJECT" -p "$TPID" --rate 64K --duration 1.5 --format json -o "$TMP/cxx.json" 2>"$TMP/cxx.err" ||
    fail "session failed: $(cat "$TMP/cxx.err")"
python3 - "$TMP/cxx.json" <<'PY' || fail "C++ names check failed"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
names = [f["function"] for f in d["stacks"][0]["frames"]]
print(names)
assert "cache::Store::remember(unsigned long)" in names, names
assert any(n and n.startswith("operator new") for n in names), names
assert not any(n and n.startswith("_Z") for s in d["stacks"] for f in s["frames"] for n in [f["function"]]), "mangled name left"
PY
whole_stacks "$TMP/cxx.json"
kill "$TPID"

cp "$TARGETS/cli_leaky" "$TMP/leaky_copy"
"$TMP/leaky_copy" --threads 2 >"$TMP/copy.out" 2>&1 &
CPID=$!
PIDS+=("$CPID")
wait_for_line "$TMP/copy.out" ready 10 || fail "copy did not start"
rm -f "$TMP/leaky_copy"
"$HEAPINJECT" -p "$CPID" --duration 1 --format json -o "$TMP/del.json" 2>"$TMP/del.err" ||
    fail "session on a deleted executable failed: $(cat "$TMP/del.err")"
python3 - "$TMP/del.json" "$TMP/leaky_copy" <<'PY' || fail "deleted module check failed"
import hi_profile, json, sys
d = hi_profile.load(sys.argv[1])
frames = [f for s in d["stacks"] for f in s["frames"] if f["module"] and sys.argv[2] in f["module"]]
assert frames, "no frame in the deleted executable"
assert all(f["module"].endswith(" (deleted)") for f in frames), frames[0]
assert any(f["function"] == "churn_alloc" for f in frames), "no names for the deleted executable"
PY
whole_stacks "$TMP/del.json"
python3 -c 'import hi_profile, sys; d = hi_profile.load(sys.argv[1]); assert any(s["frames"][-1]["function"].startswith("__clone") for s in d["stacks"])' \
    "$TMP/del.json" || fail "no stack of cli_leaky's worker threads"
assert_alive "$CPID"
ok "demangled C++ names; deleted executable marked and symbolized; every stack whole, down to _start or clone"
