# pg_lib.bash - a PostgreSQL server of a test's (or the bench's) own, in a
# directory it chooses: initdb, then a server on a unix socket only (no TCP),
# no JIT. Sourced by the e2e tests (after lib.sh) and run by bench/run.py
# (`bash -c '. pg_lib.bash && pg_start DIR && pg_env'`), so nothing here
# uses lib.sh's fail/skip: each function returns 1 with PG_ERR set, or 2
# when PostgreSQL is not installed (a skip, not a failure).
#
# pg_start DIR: initdb in DIR/data as the postgres user (the server refuses
#   to run as root), starts it with its socket and log (DIR/server.log) in
#   DIR and waits until it accepts connections. Sets PGB (the bin
#   directory), PGVER, PGDIR, PORT and MASTER (the postmaster's pid).
# pg_stop: an immediate stop of that server.
# psql_ ARGS: psql on it as postgres, unaligned, tuples only.
# pg_crashed: status 0 when the server log shows a crashed backend or a
#   restart of all processes (PG_ERR has the lines).
# pg_env: prints PGB, PORT, PGDIR and MASTER as NAME=VALUE lines.

pg_find() {
    PGB=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
    if [ ! -x "${PGB:-}/postgres" ]; then
        PG_ERR="PostgreSQL is not installed (apt-get install postgresql)"
        return 2
    fi
    if ! id postgres >/dev/null 2>&1; then
        PG_ERR="no postgres user (the server refuses to run as root)"
        return 2
    fi
    PGVER=$(basename "$(dirname "$PGB")")
}

as_pg() { runuser -u postgres -- "$@"; }

pg_start() {
    pg_find || return
    PGDIR=$1
    # The server runs as postgres: DIR's parent (a mktemp directory, 0700)
    # must be reachable by it; the directories above it are /tmp's.
    chmod a+x "$(dirname "$PGDIR")" || { PG_ERR="cannot open $(dirname "$PGDIR") to postgres"; return 1; }
    mkdir -p "$PGDIR" && chown postgres "$PGDIR" || { PG_ERR="cannot make $PGDIR"; return 1; }
    PORT=${PG_PORT:-$((20000 + $$ % 20000))}
    as_pg "$PGB/initdb" -D "$PGDIR/data" -A trust -U postgres >"$PGDIR/initdb.log" 2>&1 || {
        PG_ERR="initdb failed: $(tail -5 "$PGDIR/initdb.log")"
        return 1
    }
    as_pg "$PGB/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w -t 120 \
        -o "-k $PGDIR -p $PORT -c listen_addresses= -c jit=off ${PG_OPTIONS:-}" start >"$PGDIR/start.log" 2>&1 || {
        PG_ERR="the server did not start: $(tail -5 "$PGDIR/server.log" 2>/dev/null)"
        return 1
    }
    MASTER=$(head -1 "$PGDIR/data/postmaster.pid")
    [ -d "/proc/$MASTER" ] || { PG_ERR="no postmaster pid in postmaster.pid"; return 1; }
}

pg_stop() {
    [ -n "${PGDIR:-}" ] && [ -d "$PGDIR/data" ] || return 0
    as_pg "$PGB/pg_ctl" -D "$PGDIR/data" -m immediate stop >/dev/null 2>&1
}

psql_() { "$PGB/psql" -X -A -t -h "$PGDIR" -p "$PORT" -U postgres "$@"; }

pg_crashed() {
    PG_ERR=$(grep -E "terminated by signal|was terminated|all server processes terminated|reinitializing" \
        "$PGDIR/server.log")
    [ -n "$PG_ERR" ]
}

pg_env() { printf 'PGB=%s\nPORT=%s\nPGDIR=%s\nMASTER=%s\n' "$PGB" "$PORT" "$PGDIR" "$MASTER"; }
