/* fork_follow.h - a child forked while its parent is profiled gets a
 * session of its own (issue 28, config key follow=1).
 *
 * fork() runs our pthread_atfork child handler (start.c) in the child,
 * single-threaded, before fork returns there: it asks here whether to
 * follow and for the child's settings, and starts the child's session
 * with the parent's patched slots kept (start.c, start_in_child). vfork,
 * posix_spawn, clone, _Fork and syscall(SYS_fork) run no atfork handler:
 * their children never get an agent. What is safe there and why:
 * docs/DESIGN-NOTES.md, "Forks followed".
 */
#ifndef HI_PAYLOAD_FORK_FOLLOW_H
#define HI_PAYLOAD_FORK_FOLLOW_H

#include <sys/types.h>

#include "common/config.h"

/* Start lock, at every start: the session's settings and this process's
 * pid; following needs the socket named "<that pid>.sock" (a target in
 * another pid namespace has a socket named by the cli's pid for it, which
 * its children could not derive: they are not followed). */
void pl_follow_remember(const struct hi_config *cfg);

/* Agent: the pid (in this process's pid namespace, 0: unknown) of the
 * client that owns the session (OWN_SESSION). A child watches it as its
 * cli: it leaves when that cli is gone without having taken the child. */
void pl_follow_set_owner(pid_t pid);

/* In the fork child's atfork handler, before anything is reset: whether
 * to start a session there (follow=1, the parent's session running with
 * its hooks live, the forking thread not inside our code, the socket's
 * name usable). */
int pl_follow_wanted(void);

/* The child's settings: the parent's with the rate now in force, the
 * socket <child pid>.sock in the same directory, the owner's pid as its
 * cli, and the ttl the parent's unowned session has left (the owned one's
 * full ttl: time for the owner to take the child). 0, or -1 if the path
 * does not fit. */
int pl_follow_child_config(struct hi_config *out);

/* Whether one of the dynamic linker's locks is held now, by any thread
 * (the scan pl_follow_wanted makes; 1 too when ld.so's state was not
 * found): a followed child's lazily started agent waits for a sample
 * taken with none held (lazy_agent.h). Reads only. */
int pl_follow_loader_busy(void);

/* In the parent after each fork() (atfork parent handler): one store. */
void pl_follow_atfork_parent(void);

/* Agent, every PL_FOLLOW_SWEEP_MS once this session forked while
 * following: removes the sockets of followed children that ended without
 * exit() (_exit, a signal: nothing ran to remove them), found as
 * "<pid>.sock" in the socket's directory whose pid no longer exists and on
 * which nobody listens. A child that exec'd is alive: the cli removes its
 * socket (it sees no profiler mapped in it). */
#define PL_FOLLOW_SWEEP_MS 2000
void pl_follow_sweep(void);

#endif /* HI_PAYLOAD_FORK_FOLLOW_H */
