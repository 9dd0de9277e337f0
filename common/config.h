/* config.h - the settings string the cli passes to heapinject_start().
 *
 * The injector can pass one C string to a function in the target, so the
 * session's settings travel as "key=value" pairs separated by spaces:
 *
 *   "v=1 rate=524288 ttl=600 tick_ms=500 sock=/tmp/heapinject-1000/1234.sock"
 *
 * Keys:  v        protocol version (HI_PROTO_VERSION)
 *        rate     mean sampling interval in bytes (>= 1)
 *        ttl      seconds the agent stays attached while no client owns the
 *                 session (0 = forever)
 *        tick_ms  TICK interval
 *        sock     absolute path of the control socket, as the TARGET sees it
 *                 (its mount namespace); the directory is created 0700.
 *        cli_pid  the heapinject process that injects this agent and will
 *                 own its session, as the TARGET's pid namespace numbers it
 *                 (0 or absent: none). Until a client owns the session, the
 *                 agent detaches as soon as that process has exited: a cli
 *                 killed inside heapinject_start leaves no profiler behind
 *                 (the ttl, in whole seconds, stays the fallback).
 *        crash    1: a snapshot pushed to the owner at a fatal signal
 *                 (payload/fatal.h: SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT
 *                 while at SIG_DFL); 0 or absent: no handler installed
 *        pressure 1: a snapshot pushed to the owner at memory pressure
 *                 (payload/pressure.h); 0 or absent: not watched
 *        uffd     1: the seccomp filters in force at attach allow the
 *                 userfaultfd calls (the injector adds it after running
 *                 them: injector/seccomp_plan.c), so the agent makes its
 *                 no-syscall wait (payload/sys/seccomp_watch.c) even under
 *                 a filter; absent: only when it has no filter at all
 *        gate     HI_GATE_* groups of the agent's calls (common/
 *                 seccomp_gate_calls.h) that the filters in force at attach
 *                 allow, in decimal (the injector adds it after running them);
 *                 absent: not known (none are known to be refused only when
 *                 there is no filter at all). With it, a thread that installs
 *                 a TSYNC filter through a slot of ours can write the
 *                 agent's verdict itself (payload/interpose/hooks_sandbox.c)
 *        follow   1: a child forked (fork(), pthread_atfork handlers run) while
 *                 the session runs gets a session and agent of its own, its
 *                 socket named by its own pid in this socket's directory
 *                 (issue 28; payload/serve/fork_follow.h); 0 or absent: the
 *                 child drops the hooks (as before); 2 (HI_FOLLOW_LAZY):
 *                 as 1, but the child's agent thread and socket wait until
 *                 it has lived a while and takes a sample, and a child that
 *                 ends before leaves its last snapshot from its exiting
 *                 thread (payload/serve/lazy_agent.h)
 *        last     1: at exit (exit(), a return from main) and at a fatal
 *                 signal the agent writes a last snapshot next to the
 *                 socket, PID.last (payload/serve/last_snapshot.h); the
 *                 `attach` command asks for it
 *        pymalloc 1: CPython's MEM and OBJ allocators sampled through a
 *                 wrapper (payload/interpose/pymalloc.h); 0 or absent: not,
 *                 since any allocator in front of pymalloc costs Python a
 *                 slow path (0.75 of alone on Debian's 3.11)
 *        floor    1: forward-only hooks, no session accounting (bench/hook_bench
 *                 --floor measures the design's floor; the cli never sends it)
 * Unknown keys are ignored, so an older payload accepts a newer cli.
 *
 * heapinject_start(const char *config) returns 0 on success, or one of the
 * negative codes below (the injector reports the int return value).
 */
#ifndef HI_COMMON_CONFIG_H
#define HI_COMMON_CONFIG_H

#include <stdint.h>

#define HI_START_SYMBOL "heapinject_start"
/* The default mean bytes between samples. The one source of it: the cli's
 * options, the start config's parse (a config without rate=) and the
 * payload's session before its first start all take HI_DEFAULT_RATE, and
 * the help text shows HI_DEFAULT_RATE_TEXT, made from the same number. */
#define HI_DEFAULT_RATE_KIB 512
#define HI_DEFAULT_RATE (HI_DEFAULT_RATE_KIB * 1024u)
#define HI_DEFAULT_RATE_TEXT HI_CONFIG_STR(HI_DEFAULT_RATE_KIB) "K"
#define HI_CONFIG_STR(x) HI_CONFIG_STR_(x)
#define HI_CONFIG_STR_(x) #x
/* The largest sampling rate (bytes between samples on average) anything
 * accepts: the cli's --rate, the payload's start config, SET_RATE. */
#define HI_MAX_RATE (1ull << 40)
/* The one check of a rate, and the one wording of its bound in messages
 * ("--rate: 'X' is not a byte count between 1 and 2^40 bytes"). */
#define HI_RATE_RANGE_TEXT "between 1 and 2^40 bytes"
static inline int hi_rate_ok(uint64_t rate)
{
    return rate >= 1 && rate <= HI_MAX_RATE;
}
#define HI_DEFAULT_TTL_S 600u
#define HI_DEFAULT_TICK_MS 500u
#define HI_SOCK_PATH_MAX 107u

enum hi_start_status {
    HI_START_OK = 0,
    HI_START_EBADCONFIG = -1001,  /* config string invalid */
    HI_START_EALREADY = -1002,    /* an agent is already running */
    HI_START_ENOSLOTS = -1003,    /* no malloc-family GOT slot anywhere
                                     (statically linked allocator) */
    HI_START_ESOCKET = -1004,     /* could not create the control socket */
    HI_START_ETHREAD = -1005,     /* could not start the agent thread */
    HI_START_ENOMEM = -1006,      /* could not mmap the payload's tables */
    HI_START_ENOFDS = -1007,      /* the process is (nearly) out of file
                                     descriptors: nothing was patched */
};

#define HI_FOLLOW_LAZY 2 /* config follow=2 */
#define HI_LAZY_AGENT_MS 150 /* a lazily followed child's life before its agent may start */

struct hi_config {
    uint32_t version;
    uint64_t rate;
    uint64_t ttl_s;
    uint32_t tick_ms;
    uint32_t cli_pid;       /* 0: none */
    uint32_t floor;         /* 1: forward-only hooks (bench) */
    uint32_t crash;         /* 1: snapshot at a fatal signal (issue 16) */
    uint32_t pressure;      /* 1: snapshot at memory pressure (issue 16) */
    uint32_t uffd;          /* 1: the filters at attach allow userfaultfd (issue 25) */
    uint32_t gate;          /* HI_GATE_* groups the filters at attach allow, when gate_known */
    uint32_t gate_known;    /* 1: "gate" was given */
    uint32_t follow;        /* 1: fork children get agents (issue 28); 2: lazily (HI_FOLLOW_LAZY) */
    uint32_t pymalloc;      /* 1: CPython's allocator sampled (issue 29) */
    uint32_t last;          /* 1: a last snapshot file at exit (issue 28) */
    char sock[HI_SOCK_PATH_MAX + 1];
};

/* Parses `text` into `cfg` (defaults for missing keys). Returns 0, or -1 if
 * a value is malformed or the socket path is missing, relative or too long.
 * Uses no heap memory: safe inside the target. */
int hi_config_parse(const char *text, struct hi_config *cfg);

/* Writes cfg as a config string into buf. Returns 0 or -1 if it did not fit. */
int hi_config_format(const struct hi_config *cfg, char *buf, unsigned long buflen);

/* Human text for an hi_start_status (or "unknown status"). */
const char *hi_start_strerror(int status);

#endif /* HI_COMMON_CONFIG_H */
