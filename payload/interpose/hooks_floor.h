/* hooks_floor.h - forward-only hooks for the bench's floor (see
 * hooks_floor.c). */
#ifndef HI_PAYLOAD_HOOKS_FLOOR_H
#define HI_PAYLOAD_HOOKS_FLOOR_H

#include <stdint.h>

/* Nonzero: pl_hook_addr() hands out forward-only hooks for the malloc
 * family (the four the bench calls; others are left unpatched). */
extern int pl_hooks_floor;

uintptr_t pl_hook_floor_addr(int family, unsigned func);

#endif /* HI_PAYLOAD_HOOKS_FLOOR_H */
