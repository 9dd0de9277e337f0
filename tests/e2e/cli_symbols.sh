#!/usr/bin/env bash
# cli_symbols: what the symbolizer shows a user: demangled C++ names; and a
# program whose executable was deleted after it started keeps its function
# names (read through /proc/PID/map_files) with the module marked deleted.
. "$(dirname "$0")/lib.sh"

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
kill "$TPID"

cp "$TARGETS/cli_leaky" "$TMP/leaky_copy"
"$TMP/leaky_copy" >"$TMP/copy.out" 2>&1 &
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
assert_alive "$CPID"
ok "demangled C++ names; deleted executable marked and symbolized"
