/* output.c - writing reports to stdout or files.
 *
 * Two things a report must survive: a destination that cannot be written,
 * found out only after a session of many minutes (so it is opened first),
 * and a writer killed half way (so the file has no name until it is whole:
 * O_TMPFILE, then linkat). Write errors keep the errno of the write(2) that
 * failed: stdio only remembers that something failed and says EIO. */
#include "cli/cmd/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/process/proc.h"

#define WRITE_BUFFER (64u * 1024u)

void cli_output_report_options(struct cli_report_options *ro, const struct cli_options *o)
{
    memset(ro, 0, sizeof(*ro));
    ro->format = o->format;
    ro->leaks = o->leaks;
    ro->top = o->top;
    ro->by = o->by;
    ro->fmt.value = o->value;
    ro->fmt.no_symbols = o->no_symbols;
}

void cli_output_options(struct cli_report_options *ro, struct cli_output_ctx *ctx, const struct cli_options *o,
                        pid_t pid)
{
    char link[64];
    cli_output_report_options(ro, o);
    snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
    ssize_t n = readlink(link, ctx->exe, sizeof(ctx->exe) - 1);
    if (n > 0) {
        ctx->exe[n] = '\0';
        ro->fmt.binary_hint = ctx->exe;
    }
    if (cli_proc_cmdline(pid, ctx->cmdline, sizeof(ctx->cmdline))[0])
        ro->fmt.command = ctx->cmdline;
}

int cli_output_check(const struct cli_report_options *ro, const char *path)
{
    const struct cli_report_format *f = cli_report_find(ro->format);
    if (!f) {
        fprintf(stderr, "heapinject: unknown format '%s'\n", ro->format);
        return -EINVAL;
    }
    if (f->binary && (!path || !strcmp(path, "-")) && isatty(STDOUT_FILENO)) {
        fprintf(stderr, "heapinject: --format %s writes binary data: give -o FILE (e.g. -o profile%s)\n", f->name,
                f->suffix);
        return -EINVAL;
    }
    return 0;
}

/* ---- where: the directory and the kind of destination ---- */

/* The directory part of path ("." for a bare name), malloc'd. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    if (slash == path)
        return strdup("/");
    return strndup(path, (size_t)(slash - path));
}

/* The directory a dangling symlink's target would be created in. */
static char *dangling_dir(const char *link)
{
    char target[PATH_MAX], full[2 * PATH_MAX + 2];
    ssize_t n = readlink(link, target, sizeof(target) - 1);
    if (n <= 0)
        return dir_of(link);
    target[n] = '\0';
    if (target[0] == '/') {
        snprintf(full, sizeof(full), "%s", target);
    } else {
        char *d = dir_of(link);
        if (!d)
            return NULL;
        snprintf(full, sizeof(full), "%s/%s", d, target);
        free(d);
    }
    return dir_of(full);
}

static int say_cannot(const char *path, const char *what, int err)
{
    if (err == EISDIR)
        fprintf(stderr, "heapinject: -o %s: is a directory; give the name of a file (e.g. %s/profile.json)\n",
                path, path);
    else if (what)
        fprintf(stderr, "heapinject: -o %s: cannot write there: %s: %s\n", path, what, strerror(err));
    else
        fprintf(stderr, "heapinject: -o %s: cannot write there: %s\n", path, strerror(err));
    return -err;
}

/* /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: a descriptor the
 * caller opened (`3>>log`), written as it is: its offset, its O_APPEND,
 * nothing truncated or replaced. Returns N, or -1 for any other path. */
static int fd_path(const char *path)
{
    const char *n = NULL;
    if (!strcmp(path, "/dev/stdout"))
        return STDOUT_FILENO;
    if (!strcmp(path, "/dev/stderr"))
        return STDERR_FILENO;
    if (!strncmp(path, "/dev/fd/", 8))
        n = path + 8;
    else if (!strncmp(path, "/proc/self/fd/", 14))
        n = path + 14;
    if (!n || !*n || strspn(n, "0123456789") != strlen(n) || strlen(n) > 9)
        return -1;
    return atoi(n);
}

/* Decides how path is written (fills o->final, in_place); 0 or -errno with
 * a message. */
static int classify(struct cli_output *o, const char *path)
{
    struct stat lst, st;
    if (!*path)
        return say_cannot(path, NULL, ENOENT); /* would fail only at the link */
    if (lstat(path, &lst) < 0) {
        if (errno != ENOENT)
            return say_cannot(path, NULL, errno);
        o->final = strdup(path); /* a new file */
        return o->final ? 0 : -ENOMEM;
    }
    if (S_ISDIR(lst.st_mode))
        return say_cannot(path, NULL, EISDIR);
    if (S_ISREG(lst.st_mode)) {
        o->final = strdup(path);
        return o->final ? 0 : -ENOMEM;
    }
    if (S_ISLNK(lst.st_mode) && stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode))
            return say_cannot(path, NULL, EISDIR);
        if (S_ISREG(st.st_mode)) {
            /* The file the link names is replaced whole; the link stays. */
            o->final = realpath(path, NULL);
            return o->final ? 0 : say_cannot(path, NULL, errno);
        }
    }
    o->in_place = true; /* a device, fifo, socket or dangling symlink */
    return 0;
}

/* ---- unnamed (O_TMPFILE) and named temporary files ---- */

static int open_unnamed(const char *dir, mode_t mode)
{
    int fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, mode);
    if (fd >= 0 && fchmod(fd, mode) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The filesystem (or kernel) has no O_TMPFILE: EOPNOTSUPP; kernels before
 * 3.11 read the flags as O_DIRECTORY and say EISDIR. */
static bool no_tmpfile(int err)
{
    return err == EOPNOTSUPP || err == EISDIR || err == EINVAL;
}

/* The named temporary of the fallback, removed by a fatal signal. */
static char cleanup_name[PATH_MAX + 64];
static volatile sig_atomic_t cleanup_armed;
static const int cleanup_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
#define NCLEANUP (sizeof(cleanup_signals) / sizeof(cleanup_signals[0]))

static void on_fatal_signal(int sig)
{
    if (cleanup_armed)
        unlink(cleanup_name);
    raise(sig); /* SA_RESETHAND: delivered as default once this returns */
}

/* Catches the signals that would kill us by default (one ignored or
 * handled by the program stays as it is: no cleanup is needed then). */
static void cleanup_install(struct sigaction *old)
{
    struct sigaction sa = { .sa_handler = on_fatal_signal, .sa_flags = SA_RESETHAND };
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NCLEANUP; i++) {
        sigaction(cleanup_signals[i], NULL, &old[i]);
        if (old[i].sa_handler == SIG_DFL)
            sigaction(cleanup_signals[i], &sa, NULL);
    }
}

static void cleanup_restore(const struct sigaction *old)
{
    for (size_t i = 0; i < NCLEANUP; i++)
        if (old[i].sa_handler == SIG_DFL)
            sigaction(cleanup_signals[i], &old[i], NULL);
}

/* Creates FINAL.tmp.PID[.N] exclusively, armed for removal by a signal.
 * Returns the fd or -errno. */
static int create_named(const char *final, mode_t mode)
{
    for (unsigned i = 0; i < 100; i++) {
        if (i)
            snprintf(cleanup_name, sizeof(cleanup_name), "%s.tmp.%d.%u", final, (int)getpid(), i);
        else
            snprintf(cleanup_name, sizeof(cleanup_name), "%s.tmp.%d", final, (int)getpid());
        cleanup_armed = 1;
        int fd = open(cleanup_name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
        if (fd >= 0) {
            if (fchmod(fd, mode) == 0)
                return fd;
            int e = errno;
            close(fd);
            unlink(cleanup_name);
            cleanup_armed = 0;
            return -e;
        }
        cleanup_armed = 0;
        if (errno != EEXIST)
            return -errno;
    }
    return -EEXIST;
}

/* Gives the unnamed file fd the name final, replacing what is there.
 * Catchable signals wait meanwhile: only a SIGKILL between the link and the
 * rename of a replacement can leave a (whole) FINAL.tmp.PID. */
static int link_fd(int fd, const char *name)
{
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
    if (linkat(AT_FDCWD, proc, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0)
        return 0;
    if (errno != ENOENT || access("/proc/self/fd", X_OK) == 0)
        return -errno;
    return linkat(fd, "", AT_FDCWD, name, AT_EMPTY_PATH) == 0 ? 0 : -errno; /* no /proc */
}

static int link_into_place(int fd, const char *final)
{
    sigset_t all, old;
    char tmp[PATH_MAX + 64];
    sigfillset(&all);
    sigprocmask(SIG_BLOCK, &all, &old);
    int rc = link_fd(fd, final);
    if (rc == -EEXIST) {
        for (unsigned i = 0; i < 100 && rc == -EEXIST; i++) {
            snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", final, (int)getpid(), i);
            rc = link_fd(fd, tmp);
        }
        if (rc == 0 && rename(tmp, final) < 0) {
            rc = -errno;
            unlink(tmp);
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return rc;
}

/* ---- writing with the real errno ---- */

struct sink {
    int fd;
    int err; /* errno of the first write that failed */
};

static ssize_t sink_write(void *cookie, const char *buf, size_t n)
{
    struct sink *s = cookie;
    size_t done = 0;
    while (done < n) {
        ssize_t w = write(s->fd, buf + done, n - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (!s->err)
                s->err = w < 0 ? errno : EIO;
            return (ssize_t)done; /* short: the stream marks the error */
        }
        done += (size_t)w;
    }
    return (ssize_t)n;
}

/* Runs write on a stream over fd. 0 or -errno. */
static int write_to_fd(int fd, cli_output_writer write_doc, void *arg)
{
    struct sink s = { .fd = fd, .err = 0 };
    cookie_io_functions_t io = { .write = sink_write };
    FILE *f = fopencookie(&s, "w", io);
    if (!f)
        return -errno;
    setvbuf(f, NULL, _IOFBF, WRITE_BUFFER);
    int rc = write_doc(f, arg);
    if (fclose(f) != 0 && rc == 0)
        rc = -EIO;
    if (s.err && (rc == 0 || rc == -EIO))
        rc = -s.err;
    return rc;
}

/* write_to_fd, then close(2), whose error counts too (NFS reports a full
 * disk there). */
static int write_and_close(int fd, cli_output_writer write_doc, void *arg)
{
    int rc = write_to_fd(fd, write_doc, arg);
    if (close(fd) < 0 && rc == 0 && errno != EINTR)
        rc = -errno;
    return rc;
}

/* ---- the API ---- */

int cli_output_open(struct cli_output *o, const char *path, mode_t mode)
{
    memset(o, 0, sizeof(*o));
    o->tmp_fd = o->fd = -1;
    o->mode = mode;
    if (!path || !strcmp(path, "-"))
        return 0;
    if (!(o->path = strdup(path)))
        return -ENOMEM;
    int rc;
    if ((o->fd = fd_path(path)) >= 0) {
        int fl = fcntl(o->fd, F_GETFL);
        if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY) {
            rc = say_cannot(path, NULL, fl < 0 ? errno : EBADF);
            goto fail;
        }
        return 0;
    }
    rc = classify(o, path);
    if (rc < 0)
        goto fail;
    if (o->in_place) {
        struct stat st;
        if (stat(path, &st) == 0) {
            if (access(path, W_OK) < 0) {
                rc = say_cannot(path, NULL, errno);
                goto fail;
            }
        } else {
            char *d = dangling_dir(path);
            if (d && access(d, W_OK | X_OK) < 0)
                rc = say_cannot(path, d, errno);
            free(d);
            if (rc < 0)
                goto fail;
        }
        return 0;
    }
    char *dir = dir_of(o->final);
    if (!dir) {
        rc = -ENOMEM;
        goto fail;
    }
    o->tmp_fd = open_unnamed(dir, mode);
    if (o->tmp_fd < 0 && no_tmpfile(errno)) {
        /* Whether a file can be made there: make one and remove it. */
        int fd = create_named(o->final, mode);
        if (fd >= 0) {
            close(fd);
            unlink(cleanup_name);
            cleanup_armed = 0;
            o->named_tmp = true;
        } else {
            errno = -fd;
        }
    }
    if (o->tmp_fd < 0 && !o->named_tmp)
        rc = say_cannot(path, dir, errno);
    free(dir);
    if (rc < 0)
        goto fail;
    return 0;
fail:
    cli_output_close(o);
    return rc;
}

static int commit_named(struct cli_output *o, cli_output_writer write_doc, void *arg)
{
    struct sigaction old[NCLEANUP];
    cleanup_install(old);
    int fd = create_named(o->final, o->mode), rc = fd;
    if (fd >= 0) {
        rc = write_and_close(fd, write_doc, arg);
        if (rc == 0 && rename(cleanup_name, o->final) < 0)
            rc = -errno;
        if (rc < 0)
            unlink(cleanup_name);
        cleanup_armed = 0;
    }
    cleanup_restore(old);
    return rc;
}

int cli_output_commit(struct cli_output *o, cli_output_writer write_doc, void *arg)
{
    int rc;
    if (!o->path) {
        fflush(stdout);
        rc = write_to_fd(STDOUT_FILENO, write_doc, arg);
        if (rc < 0)
            fprintf(stderr, "heapinject: writing the report to stdout failed: %s\n", strerror(-rc));
        return rc;
    }
    if (o->fd >= 0) {
        rc = write_to_fd(o->fd, write_doc, arg);
    } else if (o->in_place) {
        int fd = open(o->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, o->mode);
        if (fd < 0) {
            rc = -errno;
            fprintf(stderr, "heapinject: cannot open %s: %s\n", o->path, strerror(-rc));
            return rc;
        }
        rc = write_and_close(fd, write_doc, arg);
    } else if (o->named_tmp) {
        rc = commit_named(o, write_doc, arg);
    } else {
        if (o->tmp_fd < 0) {
            char *dir = dir_of(o->final);
            o->tmp_fd = dir ? open_unnamed(dir, o->mode) : -1;
            rc = dir ? -errno : -ENOMEM;
            free(dir);
            if (o->tmp_fd < 0) {
                fprintf(stderr, "heapinject: cannot create %s: %s\n", o->path, strerror(-rc));
                return rc;
            }
        }
        rc = write_to_fd(o->tmp_fd, write_doc, arg);
        if (rc == 0)
            rc = link_into_place(o->tmp_fd, o->final);
        /* The unnamed file goes with its descriptor (linked or not). */
        if (close(o->tmp_fd) < 0 && rc == 0 && errno != EINTR)
            rc = -errno;
        o->tmp_fd = -1;
    }
    if (rc < 0)
        fprintf(stderr, "heapinject: writing %s failed: %s\n", o->path, strerror(-rc));
    return rc;
}

struct report_job {
    const struct cli_profile *p;
    const struct cli_report_options *ro;
};

static int write_report(FILE *f, void *arg)
{
    const struct report_job *j = arg;
    return cli_report_write(j->p, j->ro, f);
}

int cli_output_commit_report(struct cli_output *o, const struct cli_profile *p,
                             const struct cli_report_options *ro)
{
    struct report_job j = { p, ro };
    return cli_output_commit(o, write_report, &j);
}

void cli_output_close(struct cli_output *o)
{
    if (o->tmp_fd >= 0)
        close(o->tmp_fd);
    o->tmp_fd = -1;
    free(o->path);
    free(o->final);
    o->path = o->final = NULL;
}

int cli_output_write(const struct cli_profile *p, const struct cli_report_options *ro, const char *path,
                     mode_t mode)
{
    struct cli_output o;
    int rc = cli_output_open(&o, path, mode);
    if (rc == 0)
        rc = cli_output_commit_report(&o, p, ro);
    cli_output_close(&o);
    return rc;
}

const char *cli_output_series_path(char *buf, size_t len, const char *path, unsigned n, const char *format)
{
    const struct cli_report_format *f = cli_report_find(format);
    const char *suffix = f ? f->suffix : "";
    size_t pl = strlen(path), sl = strlen(suffix);
    if (sl && pl > sl && !strcmp(path + pl - sl, suffix))
        pl -= sl;
    snprintf(buf, len, "%.*s.%04u%s", (int)pl, path, n, suffix);
    return buf;
}
