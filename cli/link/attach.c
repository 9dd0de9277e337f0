/* attach.c - inject the payload and connect to its agent.
 *
 * Order matters for the target's sake: the cheap checks (process, /proc
 * permissions, an agent already there) come before any ptrace, so a second
 * `heapinject -p` on a profiled process never stops one of its threads. */
#include "cli/link/attach.h"
#include "cli/link/last_snapshot.h"
#include "cli/process/limits.h"
#include "cli/census/heap_sanity.h"
#include "cli/process/seccomp_gate.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "cli/util/fmt.h"
#include "cli/process/exe_alloc.h"
#include "cli/util/exitcode.h"
#include "cli/process/proc.h"
#include "cli/process/slots.h"
#include "injector/log.h"
#include "injector/maps.h"
#include "injector/target.h"
#include "common/config.h"

uint64_t cli_attach_main_ns;

/* One line the bench parses (bench/run.py bench_attach, bench/service.py):
 * the clock readings of main(), this process's attach begun, the cli's
 * own checks done, the injector ready to seize, the held thread's seize,
 * its safe point, dlopen's return, the detach and the agent's answer; the
 * agent's hello has the moment its hooks went live. Only with
 * HEAPINJECT_TIMING=1 (main.c). */
static void print_timing(pid_t pid, uint64_t begun, uint64_t checked, const struct inj_result *res)
{
    if (!cli_attach_main_ns)
        return;
    fprintf(stderr, "heapinject: timing (CLOCK_MONOTONIC ns): pid=%d main=%llu begun=%llu checked=%llu "
            "prepared=%llu seized=%llu safe=%llu loaded=%llu detached=%llu connected=%llu\n", (int)pid,
            (unsigned long long)cli_attach_main_ns, (unsigned long long)begun, (unsigned long long)checked,
            (unsigned long long)res->prepared_ns, (unsigned long long)res->seized_ns,
            (unsigned long long)res->safe_ns, (unsigned long long)res->loaded_ns,
            (unsigned long long)res->detached_ns, (unsigned long long)inj_now_ns());
}

int cli_attach_exit_from_inj(int e)
{
    switch (e) {
    case INJ_OK: return CLI_EXIT_OK;
    case INJ_ENOPROC:
    case INJ_EEXITED: return CLI_EXIT_NOPROC;
    case INJ_EPERM: return CLI_EXIT_PERM;
    case INJ_ETRACED:
    case INJ_ESTATE: return CLI_EXIT_BUSY;
    case INJ_ENOTPROCESS: return CLI_EXIT_USAGE;
    case INJ_ESTATIC:
    case INJ_EARCH:
    case INJ_ESECCOMP:
    case INJ_EFILES: return CLI_EXIT_UNSUPPORTED;
    case INJ_ETIMEOUT: return CLI_EXIT_TIMEOUT;
    default: return CLI_EXIT_FAILURE;
    }
}

int cli_attach_verify_unhooked(pid_t pid, char *msg, size_t len)
{
    struct cli_slots_report r;
    int rc = cli_slots_check(pid, &r);

    if (rc < 0) {
        snprintf(msg, len, "its allocator slots could not be read back (/proc/%d/mem: %s)", (int)pid,
                 strerror(-rc));
        return rc;
    }
    if (r.hooked) {
        snprintf(msg, len, "%u of its %u allocator slots still point into the profiler (%s): calls "
                 "through them pass straight on to the allocator, with no sampling",
                 r.hooked, r.slots, r.which);
        return 0;
    }
    if (!r.slots) {
        snprintf(msg, len, "no allocator slot could be read back (%u modules unreadable)", r.unreadable);
        return -ENOENT;
    }
    /* Every malloc-family GOT slot is read, hooked or not (the attach line
     * counts only those that were hooked): say so, or the two numbers look
     * like a contradiction. */
    snprintf(msg, len, "it runs on without hooks (all %u allocator slots of %u modules, hooked or not, "
             "read back through /proc/%d/mem: none points into the profiler%s)", r.slots, r.with_slots,
             (int)(r.tid ? r.tid : pid), r.unreadable ? "; some modules were unreadable" : "");
    return 1;
}

bool cli_attach_explain_loss(pid_t pid, char *why, size_t len)
{
    struct inj_target_status st;
    char comm[64];
    pid_t tid = inj_target_live_task(pid);

    why[0] = '\0';
    if (tid < 0 || inj_target_status(tid, &st))
        return false;
    if (cli_slots_payload_mapped(pid) == 0) {
        snprintf(why, len, "pid %d exec'd a new program (now %s): the profiler and every hook went with "
                 "the old memory image, nothing of heapinject is left in it. A process that execs again and "
                 "again (a wrapper, a restart loop) cannot be profiled: run heapinject -p %d once it runs "
                 "the program it ends in", (int)pid, cli_proc_comm(pid, comm, sizeof(comm)), (int)pid);
        return true;
    }
    if (st.state == 'T')
        snprintf(why, len, "pid %d is stopped (state T: SIGSTOP or job control), and so is the profiler in "
                 "it; its hooks do nothing while it is stopped, and the profiler removes them by itself "
                 "once the process continues (its time-to-live)", (int)pid);
    return false;
}

int cli_attach_start_status(pid_t pid, int status)
{
    switch (status) {
    case HI_START_OK:
        return CLI_EXIT_OK;
    case HI_START_ENOSLOTS:
        fprintf(stderr,
                "heapinject: pid %d: statically linked allocator: %s.\n"
                "The process was left as it was.\n",
                (int)pid, hi_start_strerror(status));
        return CLI_EXIT_UNSUPPORTED;
    case HI_START_ENOFDS:
        fprintf(stderr, "heapinject: pid %d is out of file descriptors: %s (see its limit in /proc/%d/limits).\n"
                "The process was left as it was, apart from the profiler library staying loaded.\n",
                (int)pid, hi_start_strerror(status), (int)pid);
        return CLI_EXIT_BUSY;
    case HI_START_EALREADY:
        fprintf(stderr,
                "heapinject: pid %d: already attached (another heapinject session?).\n"
                "Read it with 'heapinject snapshot -p %d', or stop it with 'heapinject detach -p %d'.\n",
                (int)pid, (int)pid, (int)pid);
        return CLI_EXIT_BUSY;
    default:
        fprintf(stderr, "heapinject: pid %d: the profiler did not start: %s (status %d).\n", (int)pid,
                hi_start_strerror(status), status);
        return CLI_EXIT_FAILURE;
    }
}

/* Whether pid, with no socket of its own, is a followed child whose agent
 * starts lazily and has not yet (attach --lazy-children,
 * payload/serve/lazy_agent.h): its allocator slots point into the
 * profiler, and its parent has a profiler socket. Its parent, if so. */
static pid_t lazy_parent(pid_t pid)
{
    struct inj_target_status st;
    struct cli_slots_report r;
    struct cli_sock_path cand[CLI_SOCKET_CANDIDATES];
    struct stat sb;
    if (inj_target_status(pid, &st) || st.ppid <= 1 || cli_slots_check(pid, &r) || r.hooked == 0)
        return 0;
    int n = cli_paths_socket_candidates(st.ppid, cand);
    for (int i = 0; i < n; i++)
        if (stat(cand[i].local, &sb) == 0 && S_ISSOCK(sb.st_mode))
            return st.ppid;
    return 0;
}

/* Maps a failed connect to an exit code and message. */
static int connect_error(pid_t pid, const struct cli_sock_path *sock, int rc, const struct cli_client *c,
                         bool quiet)
{
    pid_t parent;
    if ((rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR) && !quiet && (parent = lazy_parent(pid)) > 0) {
        fprintf(stderr,
                "heapinject: pid %d: a followed child of %d whose profiler has not started yet (attach\n"
                "--lazy-children: it records from its fork, and its socket and profiler thread start\n"
                "at its first sampled allocation %d ms or more after the fork; should it end before,\n"
                "its last snapshot is kept). Ask again later, or read the tree: 'heapinject snapshot\n"
                "-p %d --children' takes the last snapshots of the children that ended.\n",
                (int)pid, (int)parent, HI_LAZY_AGENT_MS, (int)parent);
        return CLI_EXIT_NOTATTACHED;
    }
    if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR) {
        if (!quiet)
            fprintf(stderr,
                    "heapinject: pid %d: not attached (no profiler socket at %s).\n"
                    "Start one with 'heapinject attach -p %d' or 'heapinject -p %d'.\n",
                    (int)pid, sock->target, (int)pid, (int)pid);
        return CLI_EXIT_NOTATTACHED;
    }
    if (rc == -EACCES || rc == -EPERM) {
        uid_t uid = 0;
        cli_proc_uid(pid, &uid);
        if (!quiet)
            fprintf(stderr,
                    "heapinject: pid %d: permission denied when looking for the profiler's socket %s.\n"
                    "Only root and the process's own user (uid %u) may connect: run heapinject as that user or as root.\n",
                    (int)pid, sock->local, (unsigned)uid);
        return CLI_EXIT_PERM;
    }
    if (!quiet)
        fprintf(stderr, "heapinject: pid %d: cannot talk to the profiler: %s\n", (int)pid, c->error);
    return CLI_EXIT_FAILURE;
}

int cli_attach_check_is_process(pid_t pid, bool quiet)
{
    struct inj_target_status st, leader;

    if (inj_target_status(pid, &st) || st.tgid <= 0 || st.tgid == pid)
        return CLI_EXIT_OK; /* gone or unreadable: the caller's own checks say so */
    if (!quiet) {
        if (inj_target_status(st.tgid, &leader))
            snprintf(leader.comm, sizeof(leader.comm), "?");
        fprintf(stderr,
                "heapinject: %d is a thread (%s) of process %d (%s), not a process: heapinject works on "
                "whole processes; use -p %d.\n",
                (int)pid, st.comm, (int)st.tgid, leader.comm, (int)st.tgid);
    }
    return CLI_EXIT_USAGE;
}

/* cli_attach_connect_existing once the pid is known to be a live process. */
static int connect_candidates(pid_t pid, struct cli_client *c, struct cli_sock_path *sock, bool quiet)
{
    struct cli_sock_path cand[CLI_SOCKET_CANDIDATES];
    int n, rc = -ENOENT, best = CLI_EXIT_NOTATTACHED;

    if ((n = cli_paths_socket_candidates(pid, cand)) < 0) {
        if (!quiet)
            fprintf(stderr, "heapinject: pid %d: cannot read /proc/%d/status: %s\n", (int)pid, (int)pid,
                    strerror(-n));
        return n == -ENOENT || n == -ESRCH ? CLI_EXIT_NOPROC : CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < n; i++) {
        cli_client_init(c);
        rc = cli_client_connect(c, cand[i].local, pid);
        if (rc == 0 && (rc = cli_client_hello(c)) == 0) {
            *sock = cand[i];
            return CLI_EXIT_OK;
        }
        if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTDIR) {
            cli_client_close(c);
            if (rc == -ECONNREFUSED)
                cli_left_socket_remove(pid, cand[i].local, quiet);
            continue;
        }
        /* A real answer that went wrong (permission, garbage): say it. */
        best = connect_error(pid, &cand[i], rc, c, quiet);
        cli_client_close(c);
        return best;
    }
    best = connect_error(pid, &cand[0], -ENOENT, c, quiet);
    return best;
}

int cli_attach_connect_existing(pid_t pid, struct cli_client *c, struct cli_sock_path *sock, bool quiet)
{
    int rc;

    if (!cli_proc_alive(pid)) {
        if (!quiet)
            fprintf(stderr, "heapinject: pid %d: no such process.\n", (int)pid);
        return CLI_EXIT_NOPROC;
    }
    if ((rc = cli_attach_check_is_process(pid, quiet)) != CLI_EXIT_OK)
        return rc;
    /* A seccomp filter installed after attach: the agent makes no call
     * until we have run the filter over its calls (it may not answer). */
    struct cli_gate_result g;
    if (cli_gate_settle(pid, &g) == 0 && !cli_gate_serves(&g)) {
        if (!quiet)
            cli_gate_say(pid);
        return CLI_EXIT_UNSUPPORTED;
    }
    return connect_candidates(pid, c, sock, quiet);
}

/* The payload refuses a socket path it cannot trust (payload/sock.c): a
 * directory that is a symlink, not ours or open to others, or a file at the
 * path that is not a socket of ours. Say which, so the user can remove it;
 * it was left untouched. */
static void explain_socket_path(pid_t pid, const struct cli_sock_path *sock)
{
    char dir[sizeof(sock->local)];
    struct stat st;
    uid_t uid = 0;

    cli_proc_uid(pid, &uid);
    snprintf(dir, sizeof(dir), "%s", sock->local);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (lstat(dir, &st) == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077)))
        fprintf(stderr, "heapinject: %s is %s; the profiler needs its own directory there (mode 0700, owner "
                        "uid %u): remove it and retry.\n", dir,
                S_ISLNK(st.st_mode) ? "a symbolic link" : !S_ISDIR(st.st_mode) ? "not a directory"
                : st.st_uid != uid ? "owned by another user" : "open to other users", (unsigned)uid);
    else if (lstat(sock->local, &st) == 0 && (!S_ISSOCK(st.st_mode) || st.st_uid != uid))
        fprintf(stderr, "heapinject: %s is in the way (%s); it was left as it is: remove it and retry.\n",
                sock->local, S_ISLNK(st.st_mode) ? "a symbolic link" : !S_ISSOCK(st.st_mode) ? "not a socket"
                : "a socket of another user");
}

/* Our pid as the target's pid namespace numbers it; 0 when it does not
 * (a target in a container): the agent then relies on its ttl alone. */
static uint32_t our_pid_for(pid_t pid)
{
    char path[64];
    struct stat self, other;

    snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
    if (stat("/proc/self/ns/pid", &self) < 0 || stat(path, &other) < 0 || self.st_dev != other.st_dev ||
        self.st_ino != other.st_ino)
        return 0;
    return (uint32_t)getpid();
}

static void sleep_ms(int ms)
{
    struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
        ;
}

bool cli_attach_target_gone(pid_t pid)
{
    for (int i = 0; i < 10; i++) {
        if (inj_target_live_task(pid) < 0)
            return true;
        sleep_ms(10);
    }
    return false;
}

/* cli_attach's checks of the process before anything is done to it, with
 * its maps when they could be read (NULL: each check reads its own). */
static int preflight(const struct cli_attach_options *o, const struct inj_maps *maps)
{
    int rc;
    char musl[256];
    if (maps ? cli_proc_musl_in(maps, musl, sizeof(musl)) : cli_proc_musl(o->pid, musl, sizeof(musl))) {
        char safe[512];
        fprintf(stderr,
                "heapinject: pid %d runs on musl libc (%s): heapinject's profiler library is built for "
                "glibc and cannot be loaded into it. The process was not touched.\n",
                (int)o->pid, cli_fmt_printable(musl, safe, sizeof(safe)));
        return CLI_EXIT_UNSUPPORTED;
    }
    if ((rc = cli_exe_alloc_check(o->pid)) != 0)
        return rc;
    if ((rc = cli_limits_check(o->pid, 1)) != CLI_EXIT_OK) /* no descriptor, no thread to be had */
        return rc;
    /* A heap the injection's own malloc calls would trip on (a fastbin
     * that loops, a broken link): glibc would abort the process inside
     * our dlopen. Refused before anything is loaded. Without libc's debug
     * information the heap cannot be read, and the attach goes on as it
     * always did (said with --verbose). */
    {
        char why[400];
        int h = maps ? cli_heap_sanity_check_in(o->pid, maps, why, sizeof(why))
                     : cli_heap_sanity_check(o->pid, why, sizeof(why));
        if (h == 0) {
            fprintf(stderr, "heapinject: pid %d's heap is corrupt: %s; loading the profiler calls malloc in the "
                    "process, and glibc would abort it there. Nothing was done; the process runs on as it was.\n",
                    (int)o->pid, why);
            return CLI_EXIT_UNSUPPORTED;
        }
        if (h < 0 && o->verbose)
            fprintf(stderr, "heapinject: pid %d: the heap was not checked before loading: %s\n", (int)o->pid, why);
    }
    return CLI_EXIT_OK;
}

int cli_attach(const struct cli_attach_options *o, struct cli_client *c, struct cli_sock_path *sock)
{
    char err[512], payload[PATH_MAX], tried[2 * PATH_MAX], config[256];
    struct hi_config cfg;
    struct inj_result res;
    uint64_t begun = inj_now_ns();
    int rc;

    rc = inj_check_target(o->pid, err, sizeof(err));
    if (rc != INJ_OK) {
        fprintf(stderr, "heapinject: %s\n", err);
        return cli_attach_exit_from_inj(rc);
    }
    /* The process's maps, read once for the musl check and the heap
     * check's first look (each read its own before: a large process's
     * maps cost ~0.4 ms of CPU a read, and a service's processes are
     * attached together). */
    struct inj_maps maps;
    const struct inj_maps *mp = inj_maps_read(o->pid, &maps) == 0 ? &maps : NULL;
    rc = preflight(o, mp);
    if (mp)
        inj_maps_free(&maps);
    if (rc != CLI_EXIT_OK)
        return rc;
    /* A zombie main thread (pthread_exit in main) with threads running on:
     * attached through one of them; say so, it explains what follows. */
    pid_t via = inj_target_live_task(o->pid);
    if (via > 0 && via != o->pid)
        fprintf(stderr, "heapinject: pid %d: its main thread has exited (a zombie) while other threads run on; "
                "attaching through thread %d\n", (int)o->pid, (int)via);
    /* An agent already serving this process: do not touch it. (That pid
     * is a live process, not a thread, inj_check_target said above.) */
    rc = connect_candidates(o->pid, c, sock, true);
    if (rc == CLI_EXIT_OK) {
        cli_client_close(c);
        return cli_attach_start_status(o->pid, HI_START_EALREADY);
    }
    if ((rc = cli_paths_payload(payload, sizeof(payload), tried, sizeof(tried))) < 0) {
        fprintf(stderr,
                "heapinject: cannot find the profiler library libheapinject.so (looked at: %s).\n"
                "Set HEAPINJECT_PAYLOAD=/path/to/libheapinject.so or reinstall heapinject.\n",
                tried[0] ? tried : strerror(-rc));
        return CLI_EXIT_FAILURE;
    }
    if ((rc = cli_paths_socket_new(o->pid, sock)) < 0) {
        fprintf(stderr, "heapinject: pid %d: cannot choose a socket path: %s\n", (int)o->pid, strerror(-rc));
        return rc == -ENOENT || rc == -ESRCH ? CLI_EXIT_NOPROC : CLI_EXIT_FAILURE;
    }
    int stale = cli_paths_clean_stale(o->pid, sock);
    if (stale > 0 && o->verbose)
        fprintf(stderr, "heapinject: removed %d stale socket%s of processes that no longer exist\n", stale,
                stale == 1 ? "" : "s");
    memset(&cfg, 0, sizeof(cfg));
    cfg.version = HI_PROTO_VERSION;
    cfg.rate = o->rate;
    cfg.ttl_s = o->ttl_s;
    cfg.tick_ms = HI_DEFAULT_TICK_MS;
    cfg.cli_pid = o->watch_cli ? our_pid_for(o->pid) : 0;
    cfg.crash = o->crash_snapshot;
    cfg.pressure = o->pressure_snapshot;
    cfg.follow = !o->follow_forks ? 0 : o->lazy_children ? HI_FOLLOW_LAZY : 1;
    cfg.pymalloc = o->pymalloc;
    cfg.last = o->last_snapshot;
    snprintf(cfg.sock, sizeof(cfg.sock), "%s", sock->target);
    if (hi_config_format(&cfg, config, sizeof(config)) < 0) {
        fprintf(stderr, "heapinject: internal error: settings do not fit\n");
        return CLI_EXIT_FAILURE;
    }

    struct inj_options io = {
        .pid = o->pid,
        .library = payload,
        .symbol = HI_START_SYMBOL,
        .argument = config,
        .method = o->via,
        .timeout_ms = 5000,
        .verbose = o->verbose,
        .profiler_syscalls = true,
        .program_checked = true, /* inj_check_target above */
    };
    memset(&res, 0, sizeof(res));
    uint64_t checked = inj_now_ns();
    rc = inj_inject(&io, &res);
    if (rc != INJ_OK) {
        fprintf(stderr, "heapinject: %s\n", res.error[0] ? res.error : "injection failed");
        return cli_attach_exit_from_inj(rc);
    }
    if (!res.called) {
        fprintf(stderr, "heapinject: pid %d: the profiler was loaded but its start function was not called\n",
                (int)o->pid);
        return CLI_EXIT_FAILURE;
    }
    if (res.return_value != 0) {
        int code = cli_attach_start_status(o->pid, (int)res.return_value);
        if (res.return_value == HI_START_ESOCKET)
            explain_socket_path(o->pid, sock);
        return code;
    }

    /* heapinject_start() listens before it returns; the retries only cover
     * a slow filesystem under /proc/PID/root. */
    for (int i = 0; i < 40; i++) {
        cli_client_init(c);
        rc = cli_client_connect(c, sock->local, o->pid);
        if (rc == 0 && (rc = cli_client_hello(c)) == 0) {
            print_timing(o->pid, begun, checked, &res);
            return CLI_EXIT_OK;
        }
        if (rc != -ENOENT && rc != -ECONNREFUSED)
            break;
        cli_client_close(c);
        if (cli_slots_payload_mapped(o->pid) == 0)
            break; /* exec'd: nothing will answer */
        sleep_ms(50);
    }
    if (cli_attach_target_gone(o->pid)) {
        cli_client_close(c);
        fprintf(stderr, "heapinject: pid %d exited while being attached\n", (int)o->pid);
        return CLI_EXIT_NOPROC;
    }
    char why[320];
    if (cli_attach_explain_loss(o->pid, why, sizeof(why))) {
        cli_client_close(c);
        fprintf(stderr, "heapinject: %s\n", why);
        return CLI_EXIT_NOPROC;
    }
    if (why[0])
        fprintf(stderr, "heapinject: %s\n", why);
    int code = connect_error(o->pid, sock, rc, c, false);
    cli_client_close(c);
    fprintf(stderr, "heapinject: the profiler started in pid %d but cannot be reached; it detaches by itself%s.\n",
            (int)o->pid, o->ttl_s ? " when its time-to-live ends" : " never: run 'heapinject detach' when reachable");
    return code == CLI_EXIT_NOTATTACHED ? CLI_EXIT_FAILURE : code;
}

int cli_attach_for_request(const struct cli_attach_options *o, struct cli_client *c, struct cli_sock_path *sock,
                           bool *ours)
{
    *ours = false;
    cli_client_init(c);
    int code = cli_attach_connect_existing(o->pid, c, sock, true);
    if (code == CLI_EXIT_NOPROC) {
        fprintf(stderr, "heapinject: pid %d: no such process.\n", (int)o->pid);
        return code;
    }
    if (code == CLI_EXIT_NOTATTACHED) {
        cli_client_init(c);
        if ((code = cli_attach(o, c, sock)) != CLI_EXIT_OK)
            return code;
        *ours = true;
        if (cli_client_own_session(c) < 0) {
            fprintf(stderr, "heapinject: pid %d: the agent does not accept the session: %s\n", (int)o->pid, c->error);
            cli_client_detach(c);
            cli_client_close(c);
            return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_OK;
    }
    if (code != CLI_EXIT_OK)
        cli_attach_connect_existing(o->pid, c, sock, false); /* says why */
    return code;
}
