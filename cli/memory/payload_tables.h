/* payload_tables.h - heapinject's own tables in a process (payload/arena.c),
 * found from outside: in the process heapinject is attached to, and in
 * its fork children, which inherit them. */
#ifndef HI_CLI_MEMORY_PAYLOAD_TABLES_H
#define HI_CLI_MEMORY_PAYLOAD_TABLES_H

#include <stdint.h>
#include <sys/types.h>

/* Resident bytes of the payload's table mappings in pid; 0 when
 * libheapinject.so is not mapped there or its list cannot be read. */
uint64_t cli_memory_payload_tables(pid_t pid);

#endif /* HI_CLI_MEMORY_PAYLOAD_TABLES_H */
