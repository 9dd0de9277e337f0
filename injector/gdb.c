/* gdb.c - the fallback method: the same injection done by gdb.
 *
 * For hosts where our ptrace path cannot work but gdb can (or to compare).
 * gdb stops every thread at attach and, with its default scheduler-locking,
 * resumes them all during an inferior call, so a lock held by another thread
 * is released in time; gdb itself saves and restores registers and clears
 * orig_rax for the call. The logic runs as a Python script inside gdb so it
 * can branch (dlerror only on failure) and check frames before calling. */
#include "injector/gdb.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/open_regular.h"
#include "injector/arch.h"
#include "injector/debuglink.h"
#include "injector/log.h"
#include "injector/safepoint.h"
#include "injector/seccomp_plan.h"
#include "injector/target.h"

static const char script_body[] =
    "import gdb, os, struct, time\n"
    "def _hi_out(key, val=''):\n"
    "    gdb.write('HI_%s %s\\n' % (key, val))\n"
    "    gdb.flush()\n"
    "def _hi_unsafe_name(n):\n"
    "    if n in HI_EXACT: return True\n"
    "    if any(n.startswith(p) for p in HI_PREFIX): return True\n"
    "    return any(s in n for s in HI_SUBSTR)\n"
    /* A signal trampoline's frame: its stack pointer points at the
     * kernel's ucontext (uc_stack at +16, the interrupted rsp at +160). A
     * handler on the alternate signal stack is refused (too small for
     * dlopen); otherwise the interrupted frames below are checked as any
     * (safepoint.c). */
    "def _hi_sigtramp_problem(f, depth):\n"
    "    try:\n"
    "        uc = int(f.read_register('rsp'))\n"
    "        ss_sp, ss_flags, ss_size = struct.unpack('<QixxxxQ', bytes(gdb.selected_inferior().read_memory(uc + 16, 24)))\n"
    "    except (gdb.error, gdb.MemoryError, struct.error):\n"
    "        return 'is running a signal handler (frame #%d) whose frame cannot be read' % depth\n"
    "    if ss_size and not ss_flags & 2 and ss_sp <= uc < ss_sp + ss_size:\n"
    "        return 'is running a signal handler on its alternate signal stack (frame #%d; %d bytes)' % (depth, ss_size)\n"
    "    return None\n"
    "def _hi_frame_problem():\n"
    "    f = gdb.newest_frame()\n"
    "    depth = 0\n"
    "    interrupted = False\n"
    "    while f is not None and depth < 128:\n"
    "        if f.type() == gdb.SIGTRAMP_FRAME:\n"
    "            p = _hi_sigtramp_problem(f, depth)\n"
    "            if p: return p\n"
    "            interrupted = True\n"
    "            f = f.older()\n"
    "            depth += 1\n"
    "            continue\n"
    "        look = f.pc() - 1 if depth and not interrupted else f.pc()\n"
    "        interrupted = False\n"
    "        if any(lo <= look < hi for lo, hi in HI_LDSO):\n"
    "            return 'is inside the dynamic linker (frame #%d)' % depth\n"
    "        if HI_ALLOC[0] <= look < HI_ALLOC[1]:\n"
    "            return \"is inside libc's malloc (frame #%d)\" % depth\n"
    "        name = f.name()\n"
    "        if name and _hi_unsafe_name(name):\n"
    "            return 'is inside %s (frame #%d)' % (name, depth)\n"
    "        try:\n"
    "            f = f.older()\n"
    "        except gdb.error:\n"
    "            break\n"
    "        depth += 1\n"
    "    return None\n"
    /* gdb's calls end with a SIGSEGV forced on the thread: on one that
     * blocks SIGSEGV the kernel unblocks it and resets its handler to
     * SIG_DFL, and gdb puts neither back (tests/e2e/inject_sigmask.sh). */
    "def _hi_blocks_segv(tid):\n"
    "    try:\n"
    "        for l in open('/proc/%d/task/%d/status' % (HI_PID, tid)):\n"
    "            if l.startswith('SigBlk:'):\n"
    "                return bool(int(l.split()[1], 16) & (1 << 10))\n"
    "    except (OSError, ValueError):\n"
    "        pass\n"
    "    return True\n"
    /* A thread in seccomp strict mode dies of gdb's first call (mmap). */
    "def _hi_strict(tid):\n"
    "    try:\n"
    "        for l in open('/proc/%d/task/%d/status' % (HI_PID, tid)):\n"
    "            if l.startswith('Seccomp:'):\n"
    "                return l.split()[1] == '1'\n"
    "    except (OSError, ValueError, IndexError):\n"
    "        pass\n"
    "    return False\n"
    "def _hi_pick():\n"
    "    why = 'no thread found'\n"
    "    for t in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):\n"
    "        if not t.is_valid(): continue\n"
    "        if _hi_strict(t.ptid[1]):\n"
    "            why = 'thread %d runs in seccomp strict mode' % t.ptid[1]\n"
    "            continue\n"
    "        if _hi_blocks_segv(t.ptid[1]):\n"
    "            why = 'thread %d blocks SIGSEGV (a call from gdb would unblock it and reset its "
    "handler; use --via ptrace)' % t.ptid[1]\n"
    "            continue\n"
    "        t.switch()\n"
    "        try:\n"
    "            p = _hi_frame_problem()\n"
    "        except gdb.error as e:\n"
    "            p = 'cannot be unwound (%s)' % e\n"
    "        if p is None:\n"
    "            return t, None\n"
    "        why = 'thread %d %s' % (t.ptid[1], p)\n"
    "    return None, why\n"
    /* A stop makes some waits fail with EINTR (arch.h inj_eintr_waits; read
     * and write on sockets with a timeout): before every detach, each such
     * thread's result becomes -ERESTARTNOHAND (-514) so that the kernel
     * restarts the call, as the ptrace path does (inj_arch_restart_eintr). */
    "def _hi_undo_eintr():\n"
    "    for t in gdb.selected_inferior().threads():\n"
    "        try:\n"
    "            t.switch()\n"
    "            nr = int(gdb.parse_and_eval('$orig_rax'))\n"
    "            if int(gdb.parse_and_eval('$rax')) != -4: continue\n"
    "            if nr in HI_EINTR_SOCKET_IO:\n"
    "                fd = int(gdb.parse_and_eval('$rdi'))\n"
    "                if not os.readlink('/proc/%d/fd/%d' % (t.ptid[1], fd)).startswith('socket:['): continue\n"
    "            elif nr not in HI_EINTR_WAITS: continue\n"
    "            gdb.execute('set var $rax = -514')\n"
    "        except (gdb.error, OSError, ValueError):\n"
    "            pass\n"
    "def _hi_detach():\n"
    "    _hi_undo_eintr()\n"
    "    gdb.execute('detach')\n"
    "def _hi_call(expr):\n"
    "    return int(gdb.parse_and_eval(expr))\n"
    "def _hi_cstr(addr):\n"
    "    if not addr: return '(no dlerror text)'\n"
    "    s = gdb.parse_and_eval('(const char *)%d' % addr).string(errors='replace')\n"
    "    return s.replace('\\n', ' ')\n"
    "def _hi_main():\n"
    "    gdb.execute('set confirm off')\n"
    "    gdb.execute('set pagination off')\n"
    "    gdb.execute('set unwindonsignal on')\n"
    "    deadline = time.time() + HI_TIMEOUT\n"
    "    while True:\n"
    "        t, why = _hi_pick()\n"
    "        if t is not None: break\n"
    "        _hi_out('UNSAFE', why)\n"
    "        _hi_detach()\n"
    "        if time.time() >= deadline:\n"
    "            _hi_out('TIMEOUT', why)\n"
    "            return\n"
    "        time.sleep(0.005)\n"
    "        gdb.execute('attach %d' % HI_PID)\n"
    "    _hi_out('THREAD', t.ptid[1])\n"
    "    blob = HI_LIB + b'\\0' + HI_SYM + b'\\0' + HI_ARG + b'\\0'\n"
    "    size = (len(blob) + 4095) // 4096 * 4096\n"
    "    buf = _hi_call('((void *(*)(void *, unsigned long, int, int, int, long))%d)"
    "(0, %d, 3, 0x22, -1, 0)' % (HI_MMAP, size))\n"
    "    if buf in (0, 2**64 - 1):\n"
    "        _hi_out('ERROR', 'mmap in the target failed')\n"
    "        _hi_detach()\n"
    "        return\n"
    "    lib, sym = buf, buf + len(HI_LIB) + 1\n"
    "    arg = sym + len(HI_SYM) + 1 if HI_HAS_ARG else 0\n"
    "    gdb.selected_inferior().write_memory(buf, blob)\n"
    "    try:\n"
    "        h = _hi_call('((void *(*)(const char *, int))%d)((const char *)%d, %d)'"
    " % (HI_DLOPEN, lib, HI_MODE))\n"
    "        if h == 0:\n"
    "            e = _hi_call('((char *(*)(void))%d)()' % HI_DLERROR) if HI_DLERROR else 0\n"
    "            _hi_out('DLERROR', _hi_cstr(e))\n"
    "        else:\n"
    "            _hi_out('HANDLE', h)\n"
    "            _hi_out('LADDR', _hi_call('*(unsigned long *)%d' % h))\n"
    "            if HI_HAS_SYM:\n"
    "                f = _hi_call('((void *(*)(void *, const char *))%d)((void *)%d, "
    "(const char *)%d)' % (HI_DLSYM, h, sym))\n"
    "                if f == 0:\n"
    "                    e = _hi_call('((char *(*)(void))%d)()' % HI_DLERROR) if HI_DLERROR else 0\n"
    "                    _hi_out('SYMERROR', _hi_cstr(e))\n"
    "                else:\n"
    "                    r = _hi_call('((int (*)(const char *))%d)((const char *)%d)' % (f, arg))\n"
    "                    _hi_out('RETURN', r)\n"
    "    finally:\n"
    "        try:\n"
    "            _hi_call('((int (*)(void *, unsigned long))%d)((void *)%d, %d)'"
    " % (HI_MUNMAP, buf, size))\n"
    "        except gdb.error:\n"
    "            pass\n"
    "    _hi_detach()\n"
    "    _hi_out('DONE')\n"
    "try:\n"
    "    _hi_main()\n"
    "except BaseException as e:\n"
    "    _hi_out('ERROR', str(e).replace('\\n', ' '))\n";

static void put_hex(FILE *f, const char *name, const char *s)
{
    fprintf(f, "%s = bytes.fromhex('", name);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        fprintf(f, "%02x", *p);
    fprintf(f, "')\n");
}

static void put_list(FILE *f, const char *name, const char *const *v)
{
    fprintf(f, "%s = [", name);
    for (int i = 0; v[i]; i++)
        fprintf(f, "'%s', ", v[i]);   /* identifiers: nothing to escape */
    fprintf(f, "]\n");
}

static int write_script(char *path, const struct inj_options *opts, const char *target_path,
                        const struct inj_maps *maps, const struct inj_libc *libc)
{
    int fd = mkstemps(path, 3);
    FILE *f;

    if (fd < 0)
        return -errno;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -errno;
    }
    fprintf(f, "HI_PID = %d\n", (int)opts->pid);
    put_hex(f, "HI_LIB", target_path);
    put_hex(f, "HI_SYM", opts->symbol);
    put_hex(f, "HI_ARG", opts->argument);
    fprintf(f, "HI_HAS_SYM = %d\nHI_HAS_ARG = %d\n", opts->symbol != NULL,
            opts->argument != NULL);
    fprintf(f, "HI_MODE = %u\n", 2u | libc->dlopen_flags);   /* RTLD_NOW */
    fprintf(f, "HI_DLOPEN = %" PRIu64 "\nHI_DLSYM = %" PRIu64 "\nHI_DLERROR = %" PRIu64 "\n",
            libc->dlopen, libc->dlsym, libc->dlerror);
    fprintf(f, "HI_MMAP = %" PRIu64 "\nHI_MUNMAP = %" PRIu64 "\n", libc->mmap, libc->munmap);
    fprintf(f, "HI_ALLOC = (%" PRIu64 ", %" PRIu64 ")\n", libc->alloc_lo, libc->alloc_hi);
    fprintf(f, "HI_LDSO = [");
    for (size_t i = 0; i < maps->n; i++)
        if (maps->v[i].path[0] == '/' && inj_maps_is_ldso(maps->v[i].path))
            fprintf(f, "(%" PRIu64 ", %" PRIu64 "), ", maps->v[i].start, maps->v[i].end);
    fprintf(f, "]\n");
    fprintf(f, "HI_EINTR_WAITS = [");
    for (int i = 0; inj_eintr_waits[i] >= 0; i++)
        fprintf(f, "%ld, ", inj_eintr_waits[i]);
    fprintf(f, "]\nHI_EINTR_SOCKET_IO = [");
    for (int i = 0; inj_eintr_socket_io[i] >= 0; i++)
        fprintf(f, "%ld, ", inj_eintr_socket_io[i]);
    fprintf(f, "]\n");
    put_list(f, "HI_EXACT", inj_safepoint_unsafe_exact);
    put_list(f, "HI_PREFIX", inj_safepoint_unsafe_prefix);
    put_list(f, "HI_SUBSTR", inj_safepoint_unsafe_substr);
    fprintf(f, "HI_TIMEOUT = %.3f\n", (opts->timeout_ms > 0 ? opts->timeout_ms : 5000) / 1000.0);
    fputs(script_body, f);
    if (fclose(f))
        return -errno;
    return 0;
}

struct gdb_out {
    bool done, have_handle, have_laddr, have_return;
    uint64_t handle, laddr;
    long long ret;
    char dlerror[300], symerror[300], timeout[300], error[300], last[300];
    bool have_dlerror, have_symerror, have_timeout, have_error;
    bool eperm, esrch;
    /* Signals that stopped a call: gdb abandons the call, restores the
     * thread and does not deliver the signal (gdb 13, its default "stop
     * pass" signals included); we send them again. */
    int taken[8];
    int ntaken;
};

int inj_gdb_received_signal(const char *line)
{
    const char *p = strstr(line, "received signal SIG");
    char name[16];
    size_t n = 0;

    if (!p)
        return 0;
    p += strlen("received signal SIG");
    while (n + 1 < sizeof(name) && p[n] && p[n] != ',' && p[n] != ' ')
        name[n] = p[n], n++;
    name[n] = '\0';
    if (n && name[0] >= '0' && name[0] <= '9') {
        long num = strtol(name, NULL, 10);
        return num > 0 && num < 65 ? (int)num : 0;
    }
    for (int sig = 1; sig < SIGRTMIN; sig++) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev && !strcmp(abbrev, name))
            return sig;
    }
    return 0;
}

/* Bounded copy without format-truncation noise. */
/* The values come from gdb, which read some of them from the target
 * (dlerror's text): control characters are shown as \xNN. */
static void set_str(char *dst, size_t size, const char *src)
{
    inj_target_printable(dst, size, src);
}

static void take_line(struct gdb_out *o, const char *line, bool verbose)
{
    const char *v = strchr(line, ' ');

    v = v ? v + 1 : "";
    if (!strncmp(line, "HI_", 3)) {
        if (!strncmp(line, "HI_DONE", 7)) {
            o->done = true;
        } else if (!strncmp(line, "HI_HANDLE ", 10)) {
            o->handle = strtoull(v, NULL, 0);
            o->have_handle = true;
        } else if (!strncmp(line, "HI_LADDR ", 9)) {
            o->laddr = strtoull(v, NULL, 0);
            o->have_laddr = true;
        } else if (!strncmp(line, "HI_RETURN ", 10)) {
            o->ret = strtoll(v, NULL, 0);
            o->have_return = true;
        } else if (!strncmp(line, "HI_DLERROR ", 11)) {
            set_str(o->dlerror, sizeof(o->dlerror), v);
            o->have_dlerror = true;
        } else if (!strncmp(line, "HI_SYMERROR ", 12)) {
            set_str(o->symerror, sizeof(o->symerror), v);
            o->have_symerror = true;
        } else if (!strncmp(line, "HI_TIMEOUT ", 11)) {
            set_str(o->timeout, sizeof(o->timeout), v);
            o->have_timeout = true;
        } else if (!strncmp(line, "HI_ERROR ", 9)) {
            set_str(o->error, sizeof(o->error), v);
            o->have_error = true;
        }
        inj_log(verbose, "gdb: %s", line);
        return;
    }
    int sig = inj_gdb_received_signal(line);

    if (sig && o->ntaken < (int)(sizeof(o->taken) / sizeof(o->taken[0])))
        o->taken[o->ntaken++] = sig;
    if (strstr(line, "ptrace: Operation not permitted"))
        o->eperm = true;
    if (strstr(line, "ptrace: No such process"))
        o->esrch = true;
    if (*line)
        set_str(o->last, sizeof(o->last), line);
    inj_log(verbose, "gdb: %s", line);
}

/* gdb gets the safe-point timeout plus this long for attaching, loading
 * symbols and the calls before we ask it to quit (SIGTERM: gdb detaches). */
#define GDB_GRACE_MS 60000

static int run_gdb(const char *script, const struct inj_options *opts, struct gdb_out *o)
{
    char pidbuf[16], line[1024];
    size_t used = 0;
    int pfd[2], st, timeout = opts->timeout_ms > 0 ? opts->timeout_ms : 5000;
    long long deadline = inj_now_ms() + timeout + GDB_GRACE_MS;
    bool termed = false;
    pid_t child;

    snprintf(pidbuf, sizeof(pidbuf), "%d", (int)opts->pid);
    if (pipe2(pfd, O_CLOEXEC))
        return -errno;
    child = fork();
    if (child < 0) {
        int e = -errno;

        close(pfd[0]);
        close(pfd[1]);
        return e;
    }
    if (child == 0) {
        int null = open("/dev/null", O_RDONLY);

        if (null >= 0)
            dup2(null, 0);
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        setenv("LC_ALL", "C", 1);
        execlp("gdb", "gdb", "-q", "-nx", "-batch",
               "-iex", "set debuginfod enabled off",
               "-iex", "set auto-load python-scripts off",
               "-p", pidbuf, "-x", script, (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    for (;;) {
        struct pollfd p = { pfd[0], POLLIN, 0 };
        long long left = deadline - inj_now_ms();
        ssize_t n;
        char *nl;

        if (left <= 0) {
            /* A hung gdb (a call that never returns): ask it to quit, then
             * insist. */
            kill(child, termed ? SIGKILL : SIGTERM);
            snprintf(o->error, sizeof(o->error), "%s",
                     termed ? "gdb killed after a hang" : "gdb timed out and was stopped");
            o->have_error = true;
            deadline = inj_now_ms() + 5000;
            termed = true;
            continue;
        }
        if (poll(&p, 1, (int)(left > 1000 ? 1000 : left)) <= 0)
            continue;
        n = read(pfd[0], line + used, sizeof(line) - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        used += (size_t)n;
        line[used] = '\0';
        while ((nl = strchr(line, '\n'))) {
            *nl = '\0';
            take_line(o, line, opts->verbose);
            used -= (size_t)(nl + 1 - line);
            memmove(line, nl + 1, used + 1);
        }
        if (used == sizeof(line) - 1) {   /* an overlong line: take it in pieces */
            take_line(o, line, opts->verbose);
            used = 0;
        }
    }
    if (used)
        take_line(o, line, opts->verbose);
    close(pfd[0]);
    while (waitpid(child, &st, 0) == -1 && errno == EINTR)
        ;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127 && !o->done && !o->last[0])
        return -ENOENT;
    return 0;
}

/* gdb reads every mapped module, and the debug files each names
 * (.gnu_debuglink), with plain blocking open()s, and has no switch to skip
 * them: a FIFO put over a library or where its debug link points (the
 * target's user can do either) would make gdb wait for ever with the
 * target stopped. So every module file must be regular and name no debug
 * file that is not (injector/debuglink.h). INJ_OK or INJ_EFILES. */
static int check_files(const struct inj_options *opts, const struct inj_maps *maps, char *err, size_t el)
{
    char path[4200], shown[512];

    for (size_t i = 0; i < maps->n; i++) {
        const struct inj_map *m = &maps->v[i];
        if (m->path[0] != '/' || m->deleted || m->offset != 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%d/root%s", (int)opts->pid, m->path);
        int fd = hi_open_regular(path);
        bool bad = fd == -EINVAL;
        if (fd >= 0) {
            bad = inj_debuglink_blocked(fd, m->path, opts->pid);
            close(fd);
        }
        if (bad) {
            inj_target_printable(shown, sizeof(shown), m->path);
            return inj_err(err, el, INJ_EFILES,
                           "pid %d maps %s, and it or the debug file it names (.gnu_debuglink) is not a "
                           "regular file (a FIFO?): gdb would open it and wait for ever. Nothing was done; "
                           "use --via ptrace, which reads regular files only", (int)opts->pid, shown);
        }
    }
    return INJ_OK;
}

int inj_gdb_inject(const struct inj_options *opts, const char *target_path,
                   const struct inj_maps *maps, const struct inj_libc *libc,
                   struct inj_result *res)
{
    char script[] = "/tmp/heapinject-gdb-XXXXXX.py";
    char *err = res->error;
    size_t el = sizeof(res->error);
    struct gdb_out o;
    int r;

    memset(&o, 0, sizeof(o));
    if (!libc->mmap || !libc->munmap)
        return inj_err(err, el, INJ_EINTERNAL, "pid %d's libc lacks mmap/munmap", opts->pid);
    if ((r = check_files(opts, maps, err, el)) != INJ_OK)
        return r;
    r = write_script(script, opts, target_path, maps, libc);
    if (r)
        return inj_err(err, el, INJ_EINTERNAL, "writing the gdb script: %s", strerror(-r));
    inj_log(opts->verbose, "running gdb -p %d -batch -nx -x %s", opts->pid, script);
    r = run_gdb(script, opts, &o);
    unlink(script);
    if (r == -ENOENT)
        return inj_err(err, el, INJ_EINTERNAL,
                       "gdb not found: install gdb (apt-get install gdb) or use --via ptrace");
    if (r)
        return inj_err(err, el, INJ_EINTERNAL, "running gdb: %s", strerror(-r));
    /* gdb has detached (or died, which detaches too). A signal that
     * stopped gdb's call (those gdb stops for by default: SIGUSR1, SIGTERM,
     * real-time ones...) made it abandon the call and restore the thread,
     * and gdb did not pass it on: it goes to the process now, as kill()
     * sent it. Its siginfo is ours, and a pause() it would have ended
     * already restarted: the gdb path's limits (DESIGN-NOTES.md). Signals
     * gdb does not stop for (SIGALRM, SIGCHLD...) reach the target's
     * handler during the call and never show here. */
    for (int i = 0; i < o.ntaken; i++) {
        inj_log(opts->verbose, "gdb kept signal %d from pid %d during a call: sending it again",
                o.taken[i], opts->pid);
        kill(opts->pid, o.taken[i]);
    }

    if (o.have_handle) {
        res->handle = o.handle;
        res->load_address = o.laddr;
    }
    if (o.have_return) {
        res->called = true;
        res->return_value = o.ret;
    }
    if (o.have_timeout)
        return inj_err(err, el, INJ_ETIMEOUT,
                       "gdb: no thread of pid %d reached a safe point within %d ms (last: %s); "
                       "the target is unchanged; retry or raise --timeout", opts->pid,
                       opts->timeout_ms, o.timeout);
    if (o.have_dlerror)
        return inj_err(err, el, INJ_ELIB, "%s(\"%s\") failed in pid %d: %s", libc->dlopen_name,
                       target_path, opts->pid, o.dlerror);
    if (o.have_symerror)
        return inj_err(err, el, INJ_ESYMBOL, "symbol %s not found in %s: %s", opts->symbol,
                       target_path, o.symerror);
    if (o.have_error) {
        if (strstr(o.error, "SIGSYS"))
            return inj_err(err, el, INJ_ESECCOMP,
                           "gdb: a seccomp filter in pid %d stopped the injected call (%s)",
                           opts->pid, o.error);
        if (strstr(o.error, "exited") || strstr(o.error, "No such process") ||
            strstr(o.error, "not being run"))
            return inj_err(err, el, INJ_EEXITED, "gdb: pid %d exited during injection (%s)",
                           opts->pid, o.error);
        if (o.ntaken && strstr(o.error, "signaled while in a function called from GDB"))
            return inj_err(err, el, INJ_EINTERNAL,
                           "gdb: signal %d (%s) arrived while gdb's call ran in pid %d; gdb "
                           "abandoned the call and restored the thread, and the signal was sent "
                           "to pid %d again; retry (or use --via ptrace, which holds signals "
                           "until the call is done)", o.taken[0], strsignal(o.taken[0]),
                           opts->pid, opts->pid);
        return inj_err(err, el, INJ_EINTERNAL, "gdb: %s", o.error);
    }
    if (o.done && o.have_handle && (!opts->symbol || o.have_return))
        return INJ_OK;
    if (o.eperm)
        return inj_err(err, el, INJ_EPERM,
                       "gdb: ptrace attach to pid %d: Operation not permitted: run as root or "
                       "as the target's user; see kernel.yama.ptrace_scope and CAP_SYS_PTRACE",
                       opts->pid);
    if (o.esrch)
        return inj_err(err, el, INJ_EEXITED, "gdb: pid %d exited", opts->pid);
    return inj_err(err, el, INJ_EINTERNAL, "gdb did not finish the injection%s%s",
                   o.last[0] ? ": " : "", o.last);
}
