/* debuglink.h - the debug files an ELF file names, checked before a reader
 * that opens them blindly (libunwind, libdw) is let near the file. */
#ifndef HI_INJECTOR_DEBUGLINK_H
#define HI_INJECTOR_DEBUGLINK_H

#include <stdbool.h>
#include <sys/types.h>

/* The ELF file open at fd (a regular file, named path) may name a separate
 * debug file: .gnu_debuglink, looked up beside path, in its .debug/ and
 * under /usr/lib/debug, and .gnu_debugaltlink (dwz). libunwind's
 * get_proc_name and libdw's standard debuginfo search open those with a
 * plain blocking open(): the file and its directory are the target's
 * user's, and a FIFO put there made the injector, running as root, wait
 * for ever with the target held in a ptrace stop. True when one of those
 * names exists and is not a regular file (the caller then reads no debug
 * file for this ELF file); false when all are regular or absent, or the
 * file is not ELF. Looks under "" and, when pid > 0, /proc/PID/root too
 * (libunwind opens the path as the maps name it, in our own root). fd's
 * offset is not moved. */
bool inj_debuglink_blocked(int fd, const char *path, pid_t pid);

#endif /* HI_INJECTOR_DEBUGLINK_H */
