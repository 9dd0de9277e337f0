#!/usr/bin/env bash
# cli_detach_datafile: at detach the cli reads back every allocator GOT
# slot of every module through /proc/PID/mem. A file that is no ELF file,
# mapped at offset 0 like a module (a JVM's class data archive and jimage
# were the case found: "some modules were unreadable" after every detach
# from java), is no module: the detach line names no unreadable module.
# A module that is really unreadable still is said (cli/process/slots.c).
. "$(dirname "$0")/lib.sh"

start_target cli_datafile "$TMP/data.bin"
grep -q "data.bin" "/proc/$TPID/maps" || fail "the data file is not mapped"
"$HEAPINJECT" -p "$TPID" --duration 0.5 -o "$TMP/r.txt" 2>"$TMP/err" || fail "session: $(cat "$TMP/err")"
cat "$TMP/err"
grep -q "read back through /proc/$TPID/mem: none points into the profiler" "$TMP/err" ||
    fail "the detach line does not say the slots were read back"
grep -q "unreadable" "$TMP/err" && fail "a data file was taken for an unreadable module"
ok "a mapped data file is no module: the detach line names none unreadable"
