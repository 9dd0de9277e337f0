/* hooks_dlsym.c - dlsym and dlvsym hooks: a hooked function looked up
 * after attach is the hook (issue 14).
 *
 * ctypes (`ctypes.CDLL("libc.so.6").malloc`), libffi users and plugin
 * loaders find malloc with dlsym and call it through the pointer, past
 * every GOT slot. While a session runs, the hook below returns our hook
 * for a result that is the original of a patched function of some family
 * (pl_hook_for_orig): the hook forwards to exactly that function, so the
 * caller gets the same behaviour, and its calls are sampled. After detach
 * the hooks are plain forwards and nothing is rewritten any more; a
 * pointer handed out during the session keeps working (the library stays
 * loaded). A pointer taken before attach is the real function: its calls
 * stay invisible.
 *
 * The caller's identity. glibc's dlsym takes its caller from its return
 * address: RTLD_NEXT searches the objects after the caller's, and
 * RTLD_DEFAULT searches the caller's own scope (its namespace, its local
 * scope for an RTLD_LOCAL or RTLD_DEEPBIND object). A hook in between
 * would be taken for the caller. So the hook is a stub in assembly: for
 * RTLD_NEXT and RTLD_DEFAULT it jumps to the original with the stack
 * untouched (the caller's return address is the one glibc sees) and the
 * result is not rewritten: a malloc found that way after attach stays
 * invisible, like one taken before attach. An explicit handle (dlopen's,
 * also dlopen(NULL), which ctypes.CDLL(None) uses) searches that object's
 * scope whoever the caller is: those go through pl_dlsym_lookup, which
 * calls the original and rewrites the result. An interposer's
 * dlsym(RTLD_NEXT, "malloc") therefore still gets the next malloc, never
 * our hook (which would count its calls twice).
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>

#include "payload/interpose/family.h"
#include "payload/interpose/modules.h"
#include "payload/record/record.h"

/* Forward targets of the stubs, [family][0: dlsym, 1: dlvsym]: the
 * assembly reads them by offset, so they are kept apart from struct
 * pl_family (set by pl_family_bind with orig[]). */
void *pl_dlsym_fwd[PL_MAX_FAMILIES][2];

_Static_assert(sizeof(void *) == 8, "the stubs below index pl_dlsym_fwd by 8-byte steps");

void *pl_dlsym_lookup(void *handle, const char *name, const char *version, void *fwd, int vsym)
    __attribute__((used));

/* Explicit handle: the lookup does not depend on the caller. */
void *pl_dlsym_lookup(void *handle, const char *name, const char *version, void *fwd, int vsym)
{
    void *r = vsym ? ((void *(*)(void *, const char *, const char *))fwd)(handle, name, version)
                   : ((void *(*)(void *, const char *))fwd)(handle, name);
    if (pl_key_load() == PL_KEY_OFF || pl_tls.guard)
        return r;
    /* A module loaded just now is looked into by its loader first (python
     * finds PyInit__ctypes in _ctypes.so, a plugin host its entry point):
     * patch it here, before it runs, so that its own lookups of malloc
     * (ctypes' libc.malloc right after `import ctypes`) come through our
     * slots too; the agent's next scan would come after them. */
    struct pl_tls *t = &pl_tls;
    uint64_t saved_key = pl_guard_enter(t);
    if (pl_busy_enter()) { /* mprotect and the loader's lock: not while a filter goes in */
        pl_modules_patch_new_from_caller();
        pl_busy_leave();
    }
    pl_guard_leave(t, saved_key);
    if (!r || !name || pl_func_by_name(name) < 0)
        return r;
    uintptr_t h = pl_hook_for_orig((uintptr_t)r);
    return h ? (void *)h : r;
}

#if defined(__x86_64__)
/* rdi handle, rsi name, rdx version (dlvsym). RTLD_NEXT is -1, RTLD_DEFAULT
 * is 0: those jump to the original as if called directly. Otherwise the
 * tail call to pl_dlsym_lookup passes fwd in rcx and vsym in r8d. */
#define PL_DLSYM_STUB(NAME, OFF, VSYM)                                                            \
    __asm__("  .text\n"                                                                           \
            "  .p2align 4\n"                                                                      \
            "  .type " NAME ", @function\n" NAME ":\n"                                            \
            "  endbr64\n" /* an indirect-branch target (a no-op without CET) */                   \
            "  cmpq $-1, %rdi\n"                                                                  \
            "  je 1f\n"                                                                           \
            "  testq %rdi, %rdi\n"                                                                \
            "  je 1f\n"                                                                           \
            "  movq pl_dlsym_fwd+" OFF "(%rip), %rcx\n"                                           \
            "  movl $" VSYM ", %r8d\n"                                                            \
            "  jmp pl_dlsym_lookup\n"                                                             \
            "1:\n"                                                                                \
            "  jmp *pl_dlsym_fwd+" OFF "(%rip)\n"                                                 \
            "  .size " NAME ", .-" NAME "\n");

PL_DLSYM_STUB("pl_hook_dlsym_0", "0", "0")
PL_DLSYM_STUB("pl_hook_dlvsym_0", "8", "1")
PL_DLSYM_STUB("pl_hook_dlsym_1", "16", "0")
PL_DLSYM_STUB("pl_hook_dlvsym_1", "24", "1")
PL_DLSYM_STUB("pl_hook_dlsym_2", "32", "0")
PL_DLSYM_STUB("pl_hook_dlvsym_2", "40", "1")
PL_DLSYM_STUB("pl_hook_dlsym_3", "48", "0")
PL_DLSYM_STUB("pl_hook_dlvsym_3", "56", "1")

_Static_assert(PL_MAX_FAMILIES == 4, "one pair of stubs per family");

void pl_hook_dlsym_0(void), pl_hook_dlvsym_0(void), pl_hook_dlsym_1(void), pl_hook_dlvsym_1(void);
void pl_hook_dlsym_2(void), pl_hook_dlvsym_2(void), pl_hook_dlsym_3(void), pl_hook_dlvsym_3(void);

static void (*const pl_dlsym_hooks[PL_MAX_FAMILIES][2])(void) = {
    { pl_hook_dlsym_0, pl_hook_dlvsym_0 },
    { pl_hook_dlsym_1, pl_hook_dlvsym_1 },
    { pl_hook_dlsym_2, pl_hook_dlvsym_2 },
    { pl_hook_dlsym_3, pl_hook_dlvsym_3 },
};

uintptr_t pl_hook_dlsym_addr(int family, unsigned func)
{
    if (func == PL_F_DLSYM)
        return (uintptr_t)pl_dlsym_hooks[family][0];
    if (func == PL_F_DLVSYM)
        return (uintptr_t)pl_dlsym_hooks[family][1];
    return 0;
}
#else
/* Other architectures: no stub yet, the slots are left alone. */
uintptr_t pl_hook_dlsym_addr(int family, unsigned func)
{
    (void)family;
    (void)func;
    return 0;
}
#endif
