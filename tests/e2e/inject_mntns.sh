#!/usr/bin/env bash
# a target in another mount namespace, with its own tmpfs on /tmp: the
# library path we see does not exist there, so the injector copies the
# library into the target's view (/tmp/.heapinject-UID/) and dlopen loads
# that copy. Our own /tmp is untouched.
source "$(dirname "$0")/inject_common.bash"
[ "$(id -u)" = 0 ] || skip "needs root for unshare -m"
command -v unshare >/dev/null || skip "unshare not installed"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m not permitted here"
NAME="libinjtest_mntns_$$.so"
build_testlib "$NAME"
UID0=$(id -u)

# unshare and sh exec into the target: $! is the target. Its stdout file was
# opened here, before /tmp was covered.
outside_tmp inj_wait
unshare -m --propagation private sh -c \
    "mount -t tmpfs tmpfs /tmp && exec '$OUTSIDE_BIN' nanosleep 5" >"$TMP/ns.out" 2>"$TMP/ns.err" &
T=$!; PIDS+=("$T")
wait_for_line "$TMP/ns.out" ready 10 || fail "target did not start: $(cat "$TMP/ns.err")"
[ "$(readlink /proc/$T/ns/mnt)" != "$(readlink /proc/self/ns/mnt)" ] || fail "target is not in its own mount namespace"
[ ! -e "/proc/$T/root$LIB" ] || fail "the library is visible in the target's namespace: test is void"

inject -v -p "$T" "$LIB" hi_test_getpid
expect_rc 0
expect_out "^called hi_test_getpid\(NULL\) = $T\$"
expect_err "another mount namespace: copied $LIB to /tmp/.heapinject-$UID0/$NAME"
grep -q "/tmp/.heapinject-$UID0/$NAME (deleted)" "/proc/$T/maps" || fail "the copy is not what the target mapped: $(grep heapinject "/proc/$T/maps")"
expect_err "removed the copy /tmp/.heapinject-$UID0/$NAME from pid $T's mount namespace"
# Detach gives back what attach took: the file is gone from the target's
# /tmp once loaded (the mapping keeps it alive).
[ ! -e "/proc/$T/root/tmp/.heapinject-$UID0/$NAME" ] || fail "the copy stays in the target's /tmp"
[ ! -e "/tmp/.heapinject-$UID0/$NAME" ] || fail "copy landed in our own /tmp"
assert_fine "$T"

# Again: a new copy is made and removed; dlopen finds the loaded one by its
# name (one mapping of the library, not two).
inject -p "$T" "$LIB" hi_test_strlen "again"
expect_rc 0
expect_out '^called hi_test_strlen\("again"\) = 5$'
[ ! -e "/proc/$T/root/tmp/.heapinject-$UID0/$NAME" ] || fail "the second copy stays in the target's /tmp"
n=$(awk -v n="$NAME" '$6 ~ n && $2 ~ /x/' "/proc/$T/maps" | wc -l)
[ "$n" = 1 ] || fail "the library's code is mapped $n times"
assert_fine "$T"

wait_exit "$T" 15
cat "$TMP/ns.out"
[ "$WRC" = 0 ] || fail "target exited with $WRC"
grep -Eq '^slept 5\.[0-9]+ rc=0 errno=0$' "$TMP/ns.out" || fail "nanosleep disturbed"
ok "mount namespace"
