# payload_lib.bash - helpers for the payload's end-to-end tests (sourced
# after lib.sh; not a test itself: run_e2e.sh only runs *.sh).
#
# Targets (tests/targets/pl_*.c) read commands on stdin; pl_start runs one
# with its stdin on a fifo so the test can send commands at any time.
# pl_attach loads the payload: with `heapinject inject` when the injector
# works (HI_ATTACH=auto|inject), else by asking the target to dlopen it
# itself (HI_ATTACH=self, the fallback) - the payload cannot tell apart.

PAYLOAD="$ROOT/build/libheapinject.so"
CLIENT="python3 $ROOT/tests/e2e/proto_client.py"
export HI_PAYLOAD="$PAYLOAD"

# pl_start NAME [ARGS...]: starts build/targets/NAME; sets TPID, TOUT, TIN.
pl_start() {
    local name=$1; shift
    TIN="$TMP/$name.in"; TOUT="$TMP/$name.out"; SOCK="$TMP/sock/agent.sock"
    rm -f "$TIN"; mkfifo "$TIN"
    # a writer that never closes the fifo, so the target never sees EOF
    sleep 100000 >"$TIN" &
    PIDS+=("$!")
    # In $TMP with core dumps on: a target that crashes leaves a core
    # there, whose stacks fail_context prints (lib.sh).
    (cd "$TMP" && ulimit -c unlimited 2>/dev/null; exec "$TARGETS/$name" "$@") <"$TIN" >"$TOUT" 2>"$TMP/$name.err" &
    TPID=$!
    TARGET_EXE="$TARGETS/$name"
    PIDS+=("$TPID")
    wait_for_line "$TOUT" '^ready' 10 || fail "$name did not get ready: $(cat "$TMP/$name.err")"
}

# pl_cmd 'COMMAND' PATTERN [SECONDS]: sends a command and waits for a new
# output line matching PATTERN; prints that line.
pl_cmd() {
    local before i
    before=$(wc -l <"$TOUT")
    echo "$1" >"$TIN"
    for ((i = 0; i < ${3:-30} * 20; i++)); do
        local line
        line=$(tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2") && { echo "$line"; return 0; }
        if ! alive "$TPID"; then # it may have answered and exited (quit) just now
            line=$(tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2") && { echo "$line"; return 0; }
            fail "target died during '$1': $(tail -3 "$TMP"/*.err)"
        fi
        sleep 0.05
    done
    fail "no '$2' after '$1'"
}

# The protocol version the payload expects in its config ("v="), from the header.
PL_V=$(awk '/^#define HI_PROTO_VERSION /{print $3}' "$ROOT/common/proto.h")

# pl_config [KEY=VALUE...]: a config string for the socket at $SOCK.
pl_config() {
    echo "v=$PL_V tick_ms=100 $* sock=$SOCK"
}

# pl_attach CONFIG: loads and starts the payload in $TPID.
pl_attach() {
    local mode=${HI_ATTACH:-auto} out
    if [ "$mode" != self ] && [ -x "$HEAPINJECT" ]; then
        if "$HEAPINJECT" inject -p "$TPID" "$PAYLOAD" heapinject_start "$1" >"$TMP/inject.log" 2>&1; then
            echo "attach: via heapinject inject"
            wait_for_sock || fail "no socket after inject: $(cat "$TMP/inject.log")"
            return 0
        fi
        [ "$mode" = inject ] && fail "heapinject inject failed: $(cat "$TMP/inject.log")"
        echo "attach: heapinject inject unavailable ($(tail -1 "$TMP/inject.log")); target dlopens the payload"
        assert_alive "$TPID"
    fi
    out=$(pl_cmd "attach $1" '^attached') || fail "attach: $out"
    [ "$out" = "attached 0" ] || fail "heapinject_start returned: $out"
    wait_for_sock || fail "no socket at $SOCK"
}

wait_for_sock() {
    local i
    for ((i = 0; i < 200; i++)); do [ -S "$SOCK" ] && return 0; sleep 0.05; done
    return 1
}

# pl_snapshot FILE: snapshot into FILE (JSON with symbols).
pl_snapshot() {
    $CLIENT snapshot "$SOCK" -o "$1" || fail "snapshot failed"
}

# pl_field "KEY=VAL KEY=VAL..." KEY: prints VAL.
pl_field() {
    tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"
}

# pl_expect_exact SNAPFILE FUNC [--top]: the truth line for FUNC printed by
# the target must match the sampled raw and estimated counts exactly.
pl_expect_exact() {
    local snap=$1 func=$2 truth sum k v
    truth=$(grep "^truth $func " "$TOUT" | tail -1) || fail "no truth for $func"
    sum=$($CLIENT sum "$snap" "$func" ${3:-})
    echo "$func: $sum"
    for kv in $(cut -d' ' -f3- <<<"$truth"); do
        k=${kv%%=*}; v=${kv#*=}
        case $k in
        alloc_objs) pl_eq "$sum" raw_alloc_objects "$v"; pl_eq "$sum" est_alloc_objects "$v" ;;
        alloc_bytes) pl_eq "$sum" raw_alloc_bytes "$v"; pl_eq "$sum" est_alloc_bytes "$v" ;;
        live_objs) pl_eq "$sum" raw_live_objects "$v"; pl_eq "$sum" est_live_objects "$v" ;;
        live_bytes) pl_eq "$sum" raw_live_bytes "$v"; pl_eq "$sum" est_live_bytes "$v" ;;
        esac
    done
}

pl_eq() {
    local got; got=$(pl_field "$1" "$2")
    [ "$got" = "$3" ] || fail "$2 = $got, expected $3 ($1)"
}

# pl_got_dump FILE: malloc-family GOT slots of $TPID, for modules of the
# target itself (not the payload and its dependencies).
pl_got_dump() {
    $CLIENT got "$TPID" | grep -v -e '^libheapinject' -e '^libunwind' -e '^liblzma' >"$1" ||
        fail "cannot read GOT of $TPID"
    [ -s "$1" ] || fail "no malloc-family GOT slot found in $TPID"
}
