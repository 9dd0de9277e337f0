/* modules.h - finding and patching the malloc-family GOT slots of every
 * loaded module, new modules after attach, and restoring them all.
 *
 * A scan runs in three phases so that no loader lock is ever held while we
 * wait for something and no dlsym/dladdr runs inside a dl_iterate_phdr
 * callback (dladdr takes dl_load_lock, the callback holds
 * dl_load_write_lock: the loader takes them in the other order):
 *   1. collect (callback): parse PT_DYNAMIC of modules not seen yet, list
 *      the JUMP_SLOT/GLOB_DAT relocations of malloc-family symbols with
 *      their current values. A module whose slots still hold link-time
 *      values is being loaded right now: it is left for the next scan.
 *   2. resolve (no loader lock): lazily unbound JUMP_SLOTs (value inside
 *      the module's own PLT) are resolved with dlsym(RTLD_DEFAULT); each
 *      target's defining module (dladdr) picks the allocator family.
 *   3. apply (callback): for modules still loaded, slots whose value did not
 *      change are rewritten to the family's hook and recorded with their
 *      exact previous value. Writing from inside the callback is what keeps
 *      a concurrent dlclose from unmapping the module under us.
 * Restoring works the same way: only slots of modules still on the list,
 * and only slots that still hold our hook, get their original back.
 *
 * Never patched: the payload and its private dependencies (they
 * run inside the hooks), the dynamic linker, the vDSO.
 * All functions take the patch lock; none may be called from a hook.
 */
#ifndef HI_PAYLOAD_MODULES_H
#define HI_PAYLOAD_MODULES_H

#include <stddef.h>
#include <stdint.h>

#define PL_MAX_SLOTS 4096u
#define PL_MAX_MODULES 1024u

/* Finds the modules never to patch. Once; 0 or -errno. */
int pl_modules_init(void);

/* pl_modules_patch_new from the thread of a dlsym call made through one
 * of our slots (hooks_dlsym.c), when modules came since the last scan and
 * the session runs: a module loaded just now gets its slots before it
 * runs (its own dlsym lookups included) rather than at the agent's next
 * scan. Never waits for the patch lock (its holder may wait for a loader
 * lock this thread holds): busy, it does nothing. Returns slots patched. */
int pl_modules_patch_new_from_caller(void);

/* Forgets all records of the previous session (its slots are restored). */
void pl_modules_reset(void);

/* Patches every module not patched yet. Returns the number of slots
 * patched by this call. */
int pl_modules_patch_new(void);

/* True when modules were loaded or unloaded since the last scan, or a
 * module was left for later. Cheap: one dl_iterate_phdr step. */
int pl_modules_changed(void);

/* The loader's counts of modules added and removed (dlpi_adds, dlpi_subs:
 * dl_iterate_phdr's first entry) into v. Any thread. */
void pl_modules_loader_counts(unsigned long long v[2]);

/* Restores every patched slot. Returns the number of slots that could not
 * be restored (0 normally). */
int pl_modules_restore_all(void);

/* In a fork child: re-initializes the patch lock and puts back every
 * slot still hooked (the child has no session and no agent), unless
 * keep_slots (the child starts a session of its own: fork_follow.h). */
void pl_modules_atfork_child(int keep_slots);

/* Counts for HELLO. */
struct hi_seccomp_gate;
/* Where the slot table lives and how an entry is laid out, for a cli that
 * restores slots through /proc/PID/mem (payload/sys/seccomp_watch.c). */
void pl_modules_describe_slots(struct hi_seccomp_gate *g);

uint32_t pl_modules_slots_patched(void);
uint32_t pl_modules_modules_patched(void);

/* Slots of the malloc family alone (not mmap, not dlsym). */
uint32_t pl_modules_malloc_slots_patched(void);

/* Text lines "slot ADDR FUNC fam=F orig=HEX cur=HEX hook=HEX patched=0|1 module=NAME"
 * for the test interface, current values read safely. Returns bytes
 * written (NUL-terminated, truncated to len). */
size_t pl_modules_describe(char *buf, size_t len);

#endif /* HI_PAYLOAD_MODULES_H */
