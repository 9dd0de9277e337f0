/* injector_safepoint.c - which frames make a thread unsafe for dlopen, and
 * the EINTR-restart rule for waits interrupted by our stop. */
#include <criterion/criterion.h>
#include <errno.h>
#include <sys/syscall.h>

#include "injector/arch.h"
#include "injector/safepoint.h"

Test(injector_safepoint, allocator_and_loader_names_are_unsafe)
{
    static const char *const unsafe[] = {
        "malloc", "free", "calloc", "realloc", "_int_malloc", "_int_free", "sysmalloc",
        "malloc_consolidate", "__libc_malloc", "je_malloc", "je_arena_choose_hard", "mi_free",
        "_ZN8tcmalloc11ThreadCache10FetchFromCentralCacheEmim", "dl_iterate_phdr", "_dl_open",
        "_dl_runtime_resolve_xsavec", "__libc_dlopen_mode", "dlopen", "fork", "exit",
        "__run_exit_handlers", "pthread_create", NULL,
    };

    for (int i = 0; unsafe[i]; i++)
        cr_expect(inj_safepoint_unsafe_name(unsafe[i]), "%s should be unsafe", unsafe[i]);
}

Test(injector_safepoint, ordinary_frames_are_safe)
{
    static const char *const safe[] = {
        "main", "nanosleep", "clock_nanosleep", "__libc_start_call_main", "__libc_start_main",
        "_start", "start_thread", "clone3", "read", "epoll_wait", "pthread_cond_wait",
        "__futex_abstimed_wait_common", "poll", "do_work", "free_list_walk", "mine", NULL,
    };

    for (int i = 0; safe[i]; i++)
        cr_expect_not(inj_safepoint_unsafe_name(safe[i]), "%s should be safe", safe[i]);
}

Test(injector_safepoint, eintr_of_waits_becomes_a_restart)
{
    inj_gregs_t r = { 0 };

    r.orig_rax = SYS_epoll_wait;
    r.rax = (unsigned long long)-EINTR;
    cr_expect(inj_arch_restart_eintr(&r));
    cr_expect_eq((long long)r.rax, -514, "-ERESTARTNOHAND");
    cr_expect_eq(r.orig_rax, SYS_epoll_wait, "syscall number untouched");

    r.orig_rax = SYS_epoll_pwait;
    r.rax = 1;   /* returned an event: nothing to undo */
    cr_expect_not(inj_arch_restart_eintr(&r));
    cr_expect_eq(r.rax, 1);

    r.orig_rax = SYS_close;   /* EINTR from close() is real */
    r.rax = (unsigned long long)-EINTR;
    cr_expect_not(inj_arch_restart_eintr(&r));

    r.orig_rax = (unsigned long long)-1;   /* not in a syscall */
    cr_expect_not(inj_arch_restart_eintr(&r));
}
