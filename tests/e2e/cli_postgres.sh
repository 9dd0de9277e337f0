#!/usr/bin/env bash
# cli_postgres: Debian's PostgreSQL server, a C program nobody here wrote
# (no frame pointers, stripped, no JIT: jit=off), profiled in one backend
# while that backend runs a query loop. The report names the server's own
# exported functions (palloc, MemoryContextAlloc*) on the malloc stacks,
# module offsets are relative to the postgres binary (inside its file), no
# frame is [jit] or [anon], the missing debug information is named with its
# package (postgresql-N-dbgsym), and after detach the backend finishes its
# query and the server takes a new connection.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/pg_lib.bash"

if ! pg_find; then
    "$ROOT/scripts/deps.sh" postgresql >/dev/null 2>&1 || skip "PostgreSQL is not installed (apt-get install postgresql)"
    pg_find || { [ $? = 2 ] && skip "$PG_ERR"; fail "$PG_ERR"; }
fi
trap 'pg_stop; cleanup' EXIT
pg_start "$TMP/pg" || fail "$PG_ERR"

# One backend: its pid, then a query loop that hashes 200k strings at a
# time (hash aggregate tuples: palloc'ed blocks from malloc) until the
# test puts a row into hi_stop (each statement of the loop sees it: read
# committed), 300 s at most: a loaded machine makes the two sessions and
# their reports take their time, and the backend must still be there.
psql_ -q -c 'CREATE TABLE hi_stop (x int)' || fail "cannot create the stop table"
cat >"$TMP/w.sql" <<'SQL'
SELECT pg_backend_pid();
SET work_mem = '512MB';
DO $$
DECLARE t0 timestamptz := clock_timestamp(); n bigint;
BEGIN
  WHILE clock_timestamp() - t0 < interval '300 seconds' AND NOT EXISTS (SELECT 1 FROM hi_stop) LOOP
    SELECT count(*) INTO n FROM (SELECT DISTINCT md5(x::text) FROM generate_series(1, 200000) x) s;
  END LOOP;
END $$;
SELECT 'query finished';
SQL
psql_ -f "$TMP/w.sql" >"$TMP/psql.out" 2>"$TMP/psql.err" &
PSQL=$!
PIDS+=("$PSQL")
wait_for_line "$TMP/psql.out" '^SET' 20 || fail "the backend did not start its query: $(cat "$TMP/psql.err")"
BPID=$(head -1 "$TMP/psql.out")
[ -d "/proc/$BPID" ] || fail "no backend pid from psql: $(cat "$TMP/psql.out")"

"$HEAPINJECT" -p "$BPID" --duration 2 -q --rate 64K --format json -o "$TMP/p.json" 2>"$TMP/err.txt" ||
    fail "heapinject (json) failed: $(cat "$TMP/err.txt")"
"$HEAPINJECT" -p "$BPID" --duration 1 -q --rate 64K >"$TMP/report.txt" 2>"$TMP/err.txt" ||
    fail "heapinject (text) failed: $(cat "$TMP/err.txt")"
sed -n '1,40p' "$TMP/report.txt"

python3 - "$TMP/p.json" "$PGB/postgres" "$PGVER" <<'PY' || fail "the postgres profile is not what a person can use (above)"
import hi_profile, os, re, sys
d = hi_profile.load(sys.argv[1])
exe, ver = os.path.realpath(sys.argv[2]), sys.argv[3]
size = os.path.getsize(exe)
frames = [f for s in d["stacks"] for f in s["frames"]]
bad = []
if not d["stacks"]:
    bad.append("no stacks")
names = {f["function"] for f in frames if f.get("function")}
if not names & {"palloc", "palloc0", "MemoryContextAlloc", "MemoryContextAllocExtended", "repalloc"}:
    bad.append("no palloc/MemoryContextAlloc frame among %s" % sorted(names)[:20])
own = [f for f in frames if f.get("module") and os.path.realpath(f["module"]) == exe]
if not own:
    bad.append("no frame in %s" % exe)
for f in own:
    if int(f["module_offset"], 16) >= size:
        bad.append("module offset %s is past the end of postgres (%d bytes): not relative" % (f["module_offset"], size)); break
for f in frames:
    if (f.get("module") or "").startswith("[") and f["module"] in ("[jit]", "[anon]"):
        bad.append("a %s frame in a JIT-free server" % f["module"]); break
# Every stack's first frames are the server's or libc's, named or module+offset, never bare.
for f in frames:
    if not f.get("module"):
        bad.append("a frame without a module: %r" % f); break
hint = [m for m in d.get("debuginfo_missing") or [] if os.path.realpath(m["module"]) == exe]
if not hint or hint[0].get("debug_package") != "postgresql-%s-dbgsym" % ver:
    bad.append("no debug hint naming postgresql-%s-dbgsym: %r" % (ver, hint))
print("\n".join(bad) or "json ok: %d stacks, %d frames in postgres" % (len(d["stacks"]), len(own)))
sys.exit(1 if bad else 0)
PY
grep -qE '^ +(palloc|palloc0|MemoryContextAlloc[A-Za-z]*|repalloc[a-z_]*) +postgres$' "$TMP/report.txt" ||
    fail "the text report does not name palloc/MemoryContextAlloc in module postgres"
grep -qE "install postgresql-[0-9]+-dbgsym .*(after adding Debian.s debug archive|, or put)" "$TMP/report.txt" || fail "the text report does not name the -dbgsym package"

# Detached: the backend finishes the query, the server serves a new session.
assert_not_traced "$BPID"
psql_ -q -c 'INSERT INTO hi_stop VALUES (1)' || fail "cannot stop the query loop"
wait "$PSQL" || fail "psql failed: $(cat "$TMP/psql.err")"
grep -q '^query finished$' "$TMP/psql.out" || fail "the backend did not finish its query: $(cat "$TMP/psql.out" "$TMP/psql.err")"
[ "$(psql_ -c 'SELECT 6*7')" = 42 ] || fail "the server does not answer after the session"
ok "postgres backend profiled: palloc stacks named, offsets module-relative, no JIT frames, dbgsym named; query finished"

# The census of a backend: a fork child of the postmaster whose [heap] grew
# after the fork, split in two mappings (census_forkchild.sh). It walks,
# and the backend answers after.
cat >"$TMP/idle.sql" <<'SQL'
SELECT pg_backend_pid();
SELECT count(*) FROM (SELECT DISTINCT md5(x::text) FROM generate_series(1, 100000) x) s;
SELECT pg_sleep(60);
SQL
psql_ -f "$TMP/idle.sql" >"$TMP/idle.out" 2>"$TMP/idle.err" &
PIDS+=($!)
wait_for_line "$TMP/idle.out" '^100000$' 30 || fail "the second backend did not run its query: $(cat "$TMP/idle.err")"
BPID=$(head -1 "$TMP/idle.out")
echo "backend $BPID: $(grep -c '\[heap\]' "/proc/$BPID/maps") [heap] mapping(s)"
"$HEAPINJECT" census -p "$BPID" --format json -o "$TMP/census.json" 2>"$TMP/census.err" ||
    fail "census of a postgres backend failed: $(cat "$TMP/census.err")"
python3 -c "
import json, sys
c = json.load(open(sys.argv[1]))['census']
print('backend census: %d blocks in use, %d bytes' % (c['in_use']['blocks'], c['in_use']['bytes']))
sys.exit(0 if c['in_use']['blocks'] > 100 else 1)" "$TMP/census.json" || fail "the backend's census found no blocks"
assert_not_traced "$BPID"
[ "$(psql_ -c 'SELECT 6*7')" = 42 ] || fail "the server does not answer after the census"
ok "census of a postgres backend (a fork child with a grown [heap]) walks"
