# rel_lib.bash - helpers for the reliability tests (tests/e2e/rel_*.sh and
# tests/stress/*.sh). Sourced after tests/e2e/lib.sh; not a test itself.
#
# Targets here read commands on stdin: rel_start gives them a fifo that
# never closes, rel_cmd sends a line and waits for the answer.

[ -x "$HEAPINJECT" ] || fail "$HEAPINJECT not built (run make)"

# rel_start NAME [ARGS...]: starts build/targets/NAME with stdin on a fifo;
# sets TPID, TOUT, TERR, TIN. Waits for "ready". REL_AS=UID runs it as that
# user (and group), through setpriv.
rel_start() {
    local name=$1; shift
    TIN="$TMP/$name.$RANDOM.in"; TOUT="${TIN%.in}.out"; TERR="${TIN%.in}.err"
    rm -f "$TIN"; mkfifo "$TIN"
    sleep 100000 >"$TIN" &          # a writer that never closes the fifo
    PIDS+=("$!")
    local as=()
    [ -n "${REL_AS:-}" ] && as=(setpriv --reuid="$REL_AS" --regid="$REL_AS" --clear-groups)
    "${as[@]}" "$TARGETS/$name" "$@" <"$TIN" >"$TOUT" 2>"$TERR" &
    TPID=$!
    PIDS+=("$TPID")
    wait_for_line "$TOUT" '^ready' 20 || fail "$name did not get ready: $(cat "$TERR")"
    # A socket file already there is a dead process's whose pid this one
    # reuses (a process killed while attached cannot remove its socket).
    local stale; stale=$(rel_sock "$TPID")
    [ -z "$stale" ] || { echo "removing stale $stale"; rm -f "$stale"; }
}

# rel_cmd COMMAND PATTERN [SECONDS]: sends COMMAND to $TPID and waits for a
# new line of $TOUT matching PATTERN; prints it. The fifo is opened for
# reading and writing (1<>): that never waits for a reader, so a target
# that died fails the test at once (opened for writing only, the open
# waited for a reader that never came: 465 s once, under load).
rel_cmd() {
    local before i line
    before=$(wc -l <"$TOUT")
    alive "$TPID" || fail "target $TPID is gone before '$1': $(tail -5 "$TERR")"
    echo "$1" 1<>"$TIN"
    for ((i = 0; i < ${3:-60} * 20; i++)); do
        line=$(tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2") && { echo "$line"; return 0; }
        if ! alive "$TPID"; then
            line=$(tail -n +"$((before + 1))" "$TOUT" | grep -m1 -- "$2") && { echo "$line"; return 0; }
            fail "target died during '$1': $(tail -5 "$TERR")"
        fi
        sleep 0.05
    done
    fail "no '$2' after '$1' within ${3:-60} s"
}

# rel_quit: "quit", then the target must exit 0 with "done ... errors=0".
rel_quit() {
    local line i
    line=$(rel_cmd quit '^done' 120)
    echo "$line"
    for ((i = 0; i < 600; i++)); do alive "$TPID" || break; sleep 0.05; done
    alive "$TPID" && fail "target did not exit after quit"
    wait "$TPID"; local rc=$?
    grep -q 'errors=0' <<<"$line" || fail "target found corrupted data: $line; $(tail -5 "$TERR")"
    [ "$rc" = 0 ] || fail "target exited with $rc: $(tail -5 "$TERR")"
}

# rel_sock PID: the profiler's socket of PID as we see it (none: empty).
rel_sock() {
    local u; u=$(awk '/^Uid:/{print $3}' "/proc/$1/status" 2>/dev/null)
    ls /tmp/heapinject-"${u:-0}"/"$1".sock /run/user/"${u:-0}"/heapinject/"$1".sock \
       /proc/"$1"/root/tmp/heapinject-"${u:-0}"/"$1".sock 2>/dev/null | head -1
}

# rel_untraced PID: alive, TracerPid 0, not stopped.
rel_untraced() {
    assert_alive "$1"
    assert_not_traced "$1"
    local st; st=$(awk '/^State:/{print $2}' "/proc/$1/status")
    [ "$st" = Z ] && st=$(awk '/^State:/{print $2}' /proc/"$1"/task/*/status | grep -v Z | head -1)
    case "$st" in T|t) fail "target $1 is left stopped (state $st)";; esac
}

# rel_detached_within PID MS [T0_NS]: the profiler of PID is gone (no socket
# file, no agent thread named "heapinject") within MS milliseconds of T0_NS
# (CLOCK_REALTIME ns, as `date +%s%N` or rel_killer.py's "killed at";
# default: now), and stays gone: right after a kill the injected call may
# still be on its way into heapinject_start, where the socket appears only
# later, so the check goes on until it has seen nothing for REL_SETTLE_MS
# (default 300) in a row. Prints the milliseconds from T0_NS to the end of
# the first check that found it gone for good.
# The loop forks nothing (bash builtins and $EPOCHREALTIME): on a loaded
# machine a fork per poll made one poll last seconds, and the time measured
# after it was the poll's, not the profiler's (5.0 s reported once, while
# the profiler had left within the TTL's 1 s).
rel_detached_within() {
    local pid=$1 limit=$2 t0=${3:-$(date +%s%N)} u now quiet_since=-1 seen f c
    u=$(awk '/^Uid:/{print $3}' "/proc/$pid/status" 2>/dev/null)
    local socks=(/tmp/heapinject-"${u:-0}"/"$pid".sock /run/user/"${u:-0}"/heapinject/"$pid".sock
                 /proc/"$pid"/root/tmp/heapinject-"${u:-0}"/"$pid".sock)
    t0=$((t0 / 1000))
    # A fifo nobody writes to: `read -t` on it sleeps without a fork.
    if [ -z "${REL_SLEEP_FD:-}" ]; then
        [ -p "$TMP/rel_sleep.fifo" ] || mkfifo "$TMP/rel_sleep.fifo"
        exec {REL_SLEEP_FD}<>"$TMP/rel_sleep.fifo"
    fi
    while :; do
        seen=0
        for f in "${socks[@]}"; do [ -S "$f" ] && seen=1; done
        for f in /proc/"$pid"/task/*/comm; do
            { read -r c <"$f"; } 2>/dev/null && [ "$c" = heapinject ] && seen=1
        done
        now=${EPOCHREALTIME/[.,]/}
        now=$(( (now - t0) / 1000 ))
        if [ "$seen" = 1 ]; then
            quiet_since=-1
            [ "$now" -gt "$limit" ] && return 1
        elif [ "$quiet_since" -lt 0 ]; then
            quiet_since=$now
        elif [ $((now - quiet_since)) -ge "${REL_SETTLE_MS:-300}" ]; then
            break
        fi
        read -r -t 0.02 -u "$REL_SLEEP_FD" c
    done
    [ "$quiet_since" -gt "$limit" ] && return 1
    echo "$quiet_since"
}

# rel_kill_time FILE: the "killer: killed at NS" of rel_killer.py's stderr.
rel_kill_time() { sed -n 's/^killer: killed at //p' "$1" | tail -1; }

# rel_threads PID / rel_fds PID / rel_filemaps PID / rel_anon PID: what the
# process holds, for before/after comparisons.
rel_threads() { ls "/proc/$1/task" | wc -l; }
rel_fds() { ls -l "/proc/$1/fd" 2>/dev/null | awk 'NR > 1 {print $9, $NF}' | sort; }
rel_filemaps() { awk '$6 ~ /^\// {print $1, $2, $3, $6}' "/proc/$1/maps" | sort; }
rel_anon_count() { awk '$6 == "" || $6 ~ /^\[(heap|anon)/ {n++} END {print n + 0}' "/proc/$1/maps"; }
rel_anon_kb() {
    local range perms off dev inode path kb=0
    while read -r range perms off dev inode path; do
        case "$path" in ""|"[heap]"|"[anon"*) ;; *) continue ;; esac
        kb=$((kb + ((16#${range#*-}) - (16#${range%-*})) / 1024))
    done <"/proc/$1/maps"
    echo "$kb"
}

# rel_build_dllib: compiles tests/stress/rel_dl_lib.c into $TMP; sets DLLIB.
rel_build_dllib() {
    DLLIB="$TMP/librel_dl.so"
    gcc -shared -fPIC -O1 -g -o "$DLLIB" "$ROOT/tests/stress/rel_dl_lib.c" || fail "cannot build $DLLIB"
}

# rel_hooks_gone PID: no malloc-family GOT slot of any module (but the
# profiler's own) points into libheapinject.so. Prints the slot count.
rel_hooks_gone() {
    python3 - "$1" "$ROOT/tests/e2e" <<'PY' || fail "GOT slots of $1 still hooked after detach"
import os, subprocess, sys
pid, e2e = sys.argv[1], sys.argv[2]
lo = hi = None
maps_text = None
# Read the maps through a live thread: a zombie leader's maps read empty,
# and a thread of a target that starts and ends threads may be gone by
# the time its file is opened: try the next one.
for t in sorted(os.listdir("/proc/%s/task" % pid), key=int):
    try:
        if open("/proc/%s/task/%s/stat" % (pid, t)).read().rsplit(")", 1)[1].split()[0] in "ZX":
            continue
        text = open("/proc/%s/task/%s/maps" % (pid, t)).read()
    except OSError:
        continue
    if text:
        maps_text = text; break
if maps_text is None:
    print("no live thread of %s to read the maps through" % pid, file=sys.stderr); sys.exit(1)
for line in maps_text.splitlines():
    p = line.split()
    if len(p) >= 6 and p[5].endswith("libheapinject.so"):
        a, b = (int(x, 16) for x in p[0].split("-"))
        lo = a if lo is None else min(lo, a); hi = b if hi is None else max(hi, b)
res = subprocess.run([sys.executable, e2e + "/proto_client.py", "got", pid], capture_output=True, text=True)
out = res.stdout
if res.returncode != 0 or not out.strip():
    print("reading the GOT slots of %s failed: %s" % (pid, (res.stderr or "no slots").strip()[-300:]), file=sys.stderr); sys.exit(1)
n = bad = 0
for line in out.splitlines():
    mod, name, addr, val = line.split()
    if mod.startswith(("libheapinject", "libunwind", "liblzma")):
        continue
    n += 1
    if lo is not None and lo <= int(val, 16) < hi:
        # stdout for callers that parse it (rel_leader), stderr for the log
        # of callers that capture stdout (rel_attach_while)
        print("still hooked: %s %s" % (mod, name)); print("still hooked: %s %s" % (mod, name), file=sys.stderr); bad += 1
print(n)
sys.exit(1 if bad or n == 0 else 0)
PY
}

# rel_kill_midstream VICTIM BYTES CMD...: runs CMD (stdout to /dev/null,
# stderr to $TMP/mid.err) and SIGKILLs VICTIM (a pid, or "self": CMD
# itself) as soon as CMD has read BYTES
# (/proc/CMD/io rchar), i.e. in the middle of a snapshot on the wire. With
# MID_AFTER=REGEX, BYTES count from when CMD's stderr first matched REGEX.
# Sets MID_AT (bytes read at the kill, or "never" if CMD ended first),
# MID_RC (CMD's exit status) and MID_NS (when it was killed, as `date
# +%s%N`; empty if never).
rel_kill_midstream() {
    local out
    out=$(MID_ERR="$TMP/mid.err" python3 - "$@" <<'PY'
import os, re, signal, subprocess, sys, time
victim, want, cmd = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
after = os.environ.get("MID_AFTER")
err = open(os.environ["MID_ERR"], "w")
p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
base = 0 if not after else None
def rchar():
    with open("/proc/%d/io" % p.pid) as f:
        for line in f:
            if line.startswith("rchar:"):
                return int(line.split()[1])
at, killed_ns = "never", ""
deadline = time.monotonic() + 60
try:
    while p.poll() is None and time.monotonic() < deadline:
        n = rchar()
        if base is None:
            if re.search(after, open(os.environ["MID_ERR"]).read()):
                base = n
            else:
                time.sleep(0.005)
                continue
        if n - base >= want:
            os.kill(p.pid if victim == "self" else int(victim), signal.SIGKILL)
            killed_ns = time.time_ns()
            at = n - base
            break
        time.sleep(0.0002)
except (OSError, TypeError):
    pass
rc = p.wait()
print(at, rc, killed_ns)
PY
)
    read -r MID_AT MID_RC MID_NS <<<"$out"
}

# rel_recovered WHAT [SINCE_NS]: after the cli was killed (rel_killer.py's
# stderr in $TMP/kill.err; or SINCE_NS, when a gdb it left ended later),
# the target $TPID is whole again by itself: within 2 s its profiler has
# detached (or never started), it is untraced, every GOT slot
# is back, its own check of its data finds nothing wrong, and the
# injector's rescue page is gone. Needs base_pages (rescue_pages before the
# first kill) and window=0; updates slowest, faults, window.
rel_recovered() {
    local ms line pages since=${2:-}
    ms=$(rel_detached_within "$TPID" 2000 "${since:-$(rel_kill_time "$TMP/kill.err")}") ||
        fail "$1: profiler still attached 2 s after the cli${since:+ and its gdb} ended ($(rel_sock "$TPID"))"
    ((ms > slowest)) && slowest=$ms
    rel_untraced "$TPID"
    rel_hooks_gone "$TPID" >/dev/null
    line=$(rel_cmd check '^check .* ok')
    grep -q 'errors=0' <<<"$line" || fail "$1: the target's data is corrupt: $line"
    # No rescue page left behind: the injector's page for its return stub
    # (injector/remote_call.c, rescue mode) is an anonymous r-x mapping of
    # ~68 KiB. Killed while the page exists, the injector leaves the thread
    # to run that stub, which unmaps the page on its way back through the
    # signal frame; the target itself has no anonymous r-x mapping
    # (baseline counted before the first kill), so any more is our leak.
    pages=$(rescue_pages)
    if ((pages == base_pages + 1)) && in_page_window; then
        # Where libc's munmap is not glibc's bare syscall wrapper, the
        # page's own mmap call is a window (injector/remote_rescue.c): the
        # cli says so before the call ("... the page stays"), and the page
        # left is the one it named. Counted and printed, not hidden.
        window=$((window + 1))
        echo "$1: recovered, but killed inside the rescue page's own mmap where that is a window: page left at $left_page ($window so far)"
        accept_left_page
    else
        ((pages == base_pages)) ||
            fail "$1: $((pages - base_pages)) rescue page(s) left in the target: $(awk '$2 == "r-xp" && $6 == ""' "/proc/$TPID/maps" | tr '\n' ' ') (cli said: $(grep -o 'mapping a rescue page.*' "$TMP/kill.err"))"
        echo "$1: recovered (profiler gone ${ms} ms after the kill; $line; no rescue page left)"
    fi
    faults=$((faults + 1))
}

# rescue_pages: anonymous r-x mappings of the target.
rescue_pages() { awk '$2 == "r-xp" && $6 == ""' "/proc/$TPID/maps" | wc -l; }

# in_page_window: the cli said the page's mmap is a window ("should
# heapinject die inside this mmap, the page stays"), the one new anonymous
# r-x mapping starts where it said, and it never said the page was armed
# ("rescue frame at"). Sets left_page. With glibc the mmap runs from
# munmap's syscall and there is no window: any page left fails.
in_page_window() {
    local said start
    said=$(sed -n 's/.*mapping a rescue page at 0x\([0-9a-f]*\).*inside this mmap, the page stays.*/\1/p' "$TMP/kill.err" | tail -1)
    [ -n "$said" ] && ! grep -q 'rescue frame at' "$TMP/kill.err" || return 1
    for start in $(awk '$2 == "r-xp" && $6 == "" {split($1, a, "-"); print a[1]}' "/proc/$TPID/maps"); do
        if (( 16#$start == 16#$said )); then
            left_page=$start
            return 0
        fi
    done
    return 1
}

# accept_left_page: a page left in the known window stays in the target
# (taking it out would need another injection); later kills are checked
# against a baseline that counts it.
accept_left_page() { base_pages=$((base_pages + 1)); }
