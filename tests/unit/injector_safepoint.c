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

    r.orig_rax = SYS_io_uring_enter;   /* its wait ends with EINTR on any stop */
    r.rax = (unsigned long long)-EINTR;
    cr_expect(inj_arch_restart_eintr(&r));
    r.orig_rax = SYS_recvfrom;         /* a socket with SO_RCVTIMEO */
    r.rax = (unsigned long long)-EINTR;
    cr_expect(inj_arch_restart_eintr(&r));
    r.orig_rax = SYS_connect;          /* restarted it would say EALREADY */
    r.rax = (unsigned long long)-EINTR;
    cr_expect_not(inj_arch_restart_eintr(&r));
    r.orig_rax = SYS_read;             /* only on a socket: the _fd rule */
    r.rax = (unsigned long long)-EINTR;
    cr_expect_not(inj_arch_restart_eintr(&r));
}

Test(injector_safepoint, syscall_number_before_a_syscall_instruction)
{
    /* glibc 2.36 clock_nanosleep: mov $0xe6,%eax; syscall */
    static const unsigned char sleep[] = { 0x74, 0x14, 0xb8, 0xe6, 0, 0, 0, 0x0f, 0x05 };
    /* a futex wait: mov $0xca,%eax; xor $0x81,%sil; syscall */
    static const unsigned char futex[] = { 0xb8, 0xca, 0, 0, 0, 0x40, 0x80, 0xf6, 0x81,
                                           0x0f, 0x05 };
    /* mov $0x7,%rax; syscall (poll) */
    static const unsigned char poll_[] = { 0x48, 0xc7, 0xc0, 7, 0, 0, 0, 0x0f, 0x05 };
    /* read (0) uses no restart block: not a candidate */
    static const unsigned char read_[] = { 0xb8, 0, 0, 0, 0, 0x0f, 0x05 };
    /* the number comes from a register: unknown */
    static const unsigned char reg[] = { 0x44, 0x89, 0xc0, 0x0f, 0x05 };
    /* no syscall instruction at the end */
    static const unsigned char none[] = { 0xb8, 0xe6, 0, 0, 0, 0x90, 0x90 };

    cr_expect_eq(inj_arch_decode_syscall_nr(sleep, sizeof(sleep)), SYS_clock_nanosleep);
    cr_expect_eq(inj_arch_decode_syscall_nr(futex, sizeof(futex)), SYS_futex);
    cr_expect_eq(inj_arch_decode_syscall_nr(poll_, sizeof(poll_)), SYS_poll);
    cr_expect_eq(inj_arch_decode_syscall_nr(read_, sizeof(read_)), -1);
    cr_expect_eq(inj_arch_decode_syscall_nr(reg, sizeof(reg)), -1);
    cr_expect_eq(inj_arch_decode_syscall_nr(none, sizeof(none)), -1);
}

Test(injector_safepoint, restart_syscall_restored_by_a_frame_reissues_the_sleep)
{
    inj_gregs_t r = { 0 };

    /* In restart_syscall: rt_sigreturn empties the restart block, so the
     * frame must issue the sleep itself, not restart_syscall (EINTR). */
    r.orig_rax = SYS_restart_syscall;
    r.rax = (unsigned long long)-516;
    r.rip = 0x1002;
    cr_expect(inj_arch_restart_by_hand(&r, false, SYS_clock_nanosleep));
    cr_expect_eq(r.rax, SYS_clock_nanosleep);
    cr_expect_eq(r.rip, 0x1000);
    cr_expect_eq(r.orig_rax, (unsigned long long)-1);

    /* Alive, with the block intact, restart_syscall goes on. */
    r.orig_rax = SYS_restart_syscall;
    r.rax = (unsigned long long)-516;
    r.rip = 0x1002;
    cr_expect(inj_arch_restart_by_hand(&r, true, SYS_clock_nanosleep));
    cr_expect_eq(r.rax, SYS_restart_syscall);
}
