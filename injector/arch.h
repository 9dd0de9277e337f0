/* arch.h - what the injector needs to know about the target's instruction set:
 * registers to save and restore, and how to set up and recognise a call. */
#ifndef HI_INJECTOR_ARCH_H
#define HI_INJECTOR_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#if defined(__x86_64__)
typedef struct user_regs_struct inj_gregs_t;
#else
#error "heapinject's injector supports x86-64 only (add injector/arch_<isa>.c)"
#endif

/* Bytes below the stack pointer that leaf code may use without moving it. */
#define INJ_ARCH_RED_ZONE 128

/* Where the injected call returns to: executing it faults, so the return
 * shows up as a SIGSEGV signal-delivery-stop at this address. */
#define INJ_ARCH_TRAP_ADDR 0

/* Everything a thread's user-mode execution depends on. */
struct inj_regs {
    inj_gregs_t gp;            /* general purpose, flags, segment bases */
    unsigned char *xstate;     /* XSAVE area (x87, SSE, AVX, AVX-512, ...), owned */
    size_t xstate_len;         /* bytes the kernel returned */
    struct user_fpregs_struct fp; /* fallback when NT_X86_XSTATE is refused */
    bool have_xstate, have_fp;
    long restart_nr;           /* in restart_syscall: the syscall it continues
                                  (inj_arch_decode_syscall_nr), else -1 */
};

/* Saves all registers of a ptrace-stopped thread (and, for a thread in
 * restart_syscall, which syscall that continues: restart_nr). Returns 0 or
 * -errno. */
int inj_arch_save(pid_t tid, struct inj_regs *regs);

/* Puts saved registers back, the FP/vector state first. 0 or -errno. */
int inj_arch_restore(pid_t tid, const struct inj_regs *regs);

void inj_arch_release(struct inj_regs *regs);

uint64_t inj_arch_sp(const inj_gregs_t *gp);
uint64_t inj_arch_ip(const inj_gregs_t *gp);

/* Sets up a call fn(args[0..nargs-1]) from a copy of the saved registers:
 * stack pointer below stack_limit (which must already be below the red
 * zone) aligned for the ABI, the return address INJ_ARCH_TRAP_ADDR (written
 * into the target's stack through inj_mem_write on x86-64), and the kernel's
 * syscall-restart marker cleared so an interrupted syscall is not restarted
 * into the call. Also loads a clean FP/SSE control state (the ABI's
 * function-entry state). Writes the registers. Returns 0 or -errno; *call_sp
 * receives the stack pointer at entry. */
int inj_arch_start_call(pid_t tid, const struct inj_regs *saved, uint64_t fn,
                        const uint64_t *args, int nargs, uint64_t stack_limit,
                        uint64_t *call_sp);

/* Whether the registers show the injected call having returned to the trap
 * address (call_sp is what inj_arch_start_call reported). */
bool inj_arch_returned(const inj_gregs_t *gp, uint64_t call_sp);

uint64_t inj_arch_retval(const inj_gregs_t *gp);

/* signal(7): some syscalls fail with EINTR when the thread is stopped at
 * all, even by ptrace and with no handler run (epoll_wait, semop,
 * sigtimedwait, io_getevents). When gp shows such a syscall that just
 * returned -EINTR, turns the result into -ERESTARTNOHAND so that the kernel
 * itself restarts the syscall on resume (or reports EINTR if a signal
 * handler does run), and returns true. The syscall number (orig_rax) and
 * rip are left alone. */
bool inj_arch_restart_eintr(inj_gregs_t *gp);

/* The same for read, readv, write and writev, which return a bare EINTR
 * on a socket with SO_RCVTIMEO/SO_SNDTIMEO: true (and rax rewritten) when
 * the call just failed with -EINTR and its descriptor (in thread tid) is a
 * socket. Other files keep their EINTR. */
bool inj_arch_restart_eintr_fd(pid_t tid, inj_gregs_t *gp);

/* The syscall numbers of the two rules above, -1 terminated (the gdb
 * path applies the same rules from its script). */
extern const long inj_eintr_waits[];
extern const long inj_eintr_socket_io[];

/* Makes the syscall the thread is stopped at (a seccomp SIGSYS stop) return
 * -err, and writes the registers. */
int inj_arch_fail_syscall(pid_t tid, int err);

/* ---- rescue frames (injector/remote_call.c, "rescue mode") -------------
 *
 * A call can return through a signal frame instead of to the trap address:
 * rt_sigreturn then puts the thread back exactly as it was saved, with no
 * injector needed. That is what keeps the target alive when the injector is
 * killed in the middle of a call. */

/* The system call number of rt_sigreturn. */
#define INJ_ARCH_NR_SIGRETURN 15

/* Finds a sigreturn trampoline (glibc's and musl's __restore_rt: "mov $15,
 * %rax; syscall") in code[0..len). Returns its offset and sets *syscall_end
 * to the offset just past its syscall instruction, or -1. */
long inj_arch_find_restorer(const unsigned char *code, size_t len, size_t *syscall_end);

/* The return stub we place in the target: copies the return register to
 * the one rt_sigreturn leaves alone (it is overwritten by the frame anyway,
 * but its value is visible to us at the syscall-entry stop), then calls
 * rt_sigreturn. Writes it into buf (>= 16 bytes); returns its length and
 * sets *syscall_end as above. */
size_t inj_arch_rescue_stub(unsigned char *buf, size_t *syscall_end);

/* Where the stub left the call's return value (at the rt_sigreturn entry). */
uint64_t inj_arch_stub_retval(const inj_gregs_t *gp);

/* System call numbers of mmap and munmap (the rescue page's life). */
#define INJ_ARCH_NR_MMAP 9
#define INJ_ARCH_NR_MUNMAP 11
/* ... and of getpid: what the stub's munmap becomes under a seccomp filter
 * (no args read, rdi and rsi kept: injector/remote_rescue.c). */
#define INJ_ARCH_NR_GETPID 39

/* Room for the self-unmapping stub below. */
#define INJ_ARCH_UNMAP_STUB_MAX 64

/* The return stub that takes its own page away: a call returns into it
 * through a return address at slot - 16 (see inj_arch_unmap_stub_sp); it
 * stores the return register in the frame at slot (in the siginfo part,
 * which rt_sigreturn does not read), moves the stack pointer up to slot
 * and jumps to munmap_fn(page, page_len). The frame's return slot must
 * hold the sigreturn trampoline: munmap returns there, outside the page
 * it has just removed, and rt_sigreturn restores the thread. A live
 * injector stops the thread at that munmap's syscall entry instead.
 * Writes buf (INJ_ARCH_UNMAP_STUB_MAX bytes); returns its length. */
size_t inj_arch_unmap_stub(unsigned char *buf, uint64_t slot, uint64_t page, uint64_t page_len,
                           uint64_t munmap_fn);

/* The rescue page's mmap, made so that our death anywhere in it takes the
 * page away: the thread starts at the syscall instruction of the C
 * library's munmap with mmap's number and arguments, and the return chain
 * above its stack pointer goes to munmap itself (the syscall leaves the
 * page's address and length in the argument registers) and then to the
 * sigreturn trampoline. This finds that instruction: its offset in
 * code[0..len), the start of munmap, when munmap is exactly glibc's bare
 * syscall wrapper (both its ways out known), else -1. */
long inj_arch_munmap_syscall_at(const unsigned char *code, size_t len);

/* Sets up the thread to run system call nr(args) from the syscall
 * instruction at insn with stack pointer sp (the registers only: no FP
 * state is touched, the kernel does not read it). 0 or -errno. */
int inj_arch_set_syscall(pid_t tid, const struct inj_regs *saved, uint64_t insn, long nr,
                         const uint64_t *args, int nargs, uint64_t sp);

/* Stack pointer for a call returning into the self-unmapping stub (its
 * return address goes there): below the frame's slot, which keeps the
 * trampoline's address, and aligned as inj_arch_set_call needs. */
uint64_t inj_arch_unmap_stub_sp(uint64_t slot);

/* Where the self-unmapping stub leaves the return value. */
uint64_t inj_arch_unmap_stub_retval_addr(uint64_t slot);

/* Builds the image of a signal frame that rt_sigreturn turns back into
 * `saved` with signal mask `sigmask`, to be written just below `top` (below
 * the red zone). Because rt_sigreturn never restarts a system call, an
 * interrupted restartable syscall is restarted by the frame itself (rip
 * back over the syscall instruction, rax = its number), as the kernel would
 * have done. *image (malloc'ed, owned by the caller) of *len bytes goes at
 * *slot, which is also the stack pointer for a call: the return address
 * belongs in its first 8 bytes. Returns 0 or -errno. */
int inj_arch_rescue_frame(const struct inj_regs *saved, uint64_t sigmask, uint64_t top,
                          unsigned char **image, size_t *len, uint64_t *slot);

/* Sets up a call fn(args) whose return address is already at sp (a rescue
 * frame's slot): registers first, then the ABI's clean FP control state.
 * 0 or -errno. */
int inj_arch_set_call(pid_t tid, const struct inj_regs *saved, uint64_t fn,
                      const uint64_t *args, int nargs, uint64_t sp);

/* Registers for a thread that will not pass through the kernel's own
 * syscall restart (put back at a syscall stop with orig_rax = -1, or by
 * rt_sigreturn): when gp shows an interrupted syscall the kernel would have
 * restarted, rewinds rip over the syscall instruction and loads its number
 * (restart_syscall for -ERESTART_RESTARTBLOCK when the thread's restart
 * block is intact, else the syscall itself: a relative sleep starts over;
 * when the thread is already in restart_syscall, whose restart block
 * rt_sigreturn empties, the syscall restart_nr it continues, if known).
 * Always sets orig_rax to -1. Returns whether it rewound. */
bool inj_arch_restart_by_hand(inj_gregs_t *gp, bool restart_block_intact, long restart_nr);

/* The number of the syscall gp shows interrupted, to be restarted by the
 * kernel (rax = -ERESTART*), else -1. */
long inj_arch_interrupted_syscall(const inj_gregs_t *gp);

/* Whether gp shows an interrupted syscall that the kernel restarts through
 * the thread's restart block (-ERESTART_RESTARTBLOCK): rt_sigreturn empties
 * that block, so after one ran only a restart by hand is left. */
bool inj_arch_restart_uses_block(const inj_gregs_t *gp);

/* code[0..len) ends with a syscall instruction: the syscall number loaded
 * just before it ("mov $nr,%eax", possibly followed by a few instructions
 * that leave %rax alone), when that is a syscall that uses the kernel's
 * restart block (nanosleep, clock_nanosleep, futex, poll); else -1. */
long inj_arch_decode_syscall_nr(const unsigned char *code, size_t len);

#endif /* HI_INJECTOR_ARCH_H */
