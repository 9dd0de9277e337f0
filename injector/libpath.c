/* libpath.c - the path under which the target can open the library.
 *
 * dlopen runs in the target and resolves the path in the target's mount
 * namespace (a container, or a service with PrivateTmp=) with the target's
 * credentials. A path we see may not exist there, or may lie in a
 * directory the target's user cannot enter (a 0700 home where heapinject
 * was built, and a target running as postgres or www-data): then the
 * library is copied into a directory of the target's own view through
 * /proc/PID/root, and the copy is removed once the injection is over. */
#include "injector/libpath.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "injector/error.h"
#include "injector/log.h"
#include "injector/target.h"

static int copy_fd(int in, int out)
{
    char buf[65536];

    for (;;) {
        ssize_t r = read(in, buf, sizeof(buf)), w, off = 0;

        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -errno;
        if (r == 0)
            return 0;
        while (off < r) {
            w = write(out, buf + off, (size_t)(r - off));
            if (w < 0 && errno == EINTR)
                continue;
            if (w < 0)
                return -errno;
            off += w;
        }
    }
}

/* Makes ROOT/DIR/.heapinject-UID, owned by the target's user and 0700, or
 * checks that the existing one is such a directory (not a symlink planted
 * by someone else). Returns 0 or -errno. */
static int make_private_dir(const char *path, uid_t uid, gid_t gid)
{
    struct stat st;

    if (mkdir(path, 0700) == 0) {
        if (chown(path, uid, gid) && geteuid() == 0)
            return -errno;
        return 0;
    }
    if (errno != EEXIST)
        return -errno;
    if (lstat(path, &st))
        return -errno;
    if (!S_ISDIR(st.st_mode) || (st.st_uid != uid && st.st_uid != 0) || (st.st_mode & 022))
        return -EPERM;
    return 0;
}

/* The supplementary groups on pid's Groups: line. Returns how many (at
 * most max) or -errno. */
static int target_groups(pid_t pid, gid_t *groups, int max)
{
    char path[64], line[4096];
    FILE *f;
    int n = -ENOENT;

    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return -errno;
    while (fgets(line, sizeof(line), f)) {
        char *p = line + 7, *end;

        if (strncmp(line, "Groups:", 7))
            continue;
        for (n = 0; n < max; p = end) {
            unsigned long g = strtoul(p, &end, 10);

            if (end == p)
                break;
            groups[n++] = (gid_t)g;
        }
        break;
    }
    fclose(f);
    return n;
}

/* The answers of target_can_read's children by credentials and path: the
 * processes of one command mostly run as one user (a server's workers),
 * and each check forks the cli, whose copy of a big address space with
 * its attach threads was ~6% of its CPU attaching PostgreSQL's 14
 * processes. Within one command the library file stays put (the dlopen
 * says what is wrong if it does not). */
#define READ_ANSWERS_MAX 8
static struct read_answer {
    uid_t uid;
    gid_t gid;
    int ngroups;
    gid_t groups[256];
    char path[PATH_MAX];
    bool yes;
} read_answers[READ_ANSWERS_MAX];
static int nread_answers;
static pthread_mutex_t read_answers_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_creds(const struct read_answer *a, uid_t uid, gid_t gid, const gid_t *groups, int n,
                       const char *path)
{
    return a->uid == uid && a->gid == gid && a->ngroups == n &&
           !memcmp(a->groups, groups, (size_t)n * sizeof(*groups)) && !strcmp(a->path, path);
}

/* 1 or 0 when answered before for these credentials and path, -1 when
 * not; then the caller holds read_answers_lock until keep_answer or
 * drop_lock (the command's attaches start together: one fork, not one
 * each). */
static int known_answer(uid_t uid, gid_t gid, const gid_t *groups, int n, const char *path)
{
    pthread_mutex_lock(&read_answers_lock);
    for (int i = 0; i < nread_answers; i++)
        if (same_creds(&read_answers[i], uid, gid, groups, n, path)) {
            int r = read_answers[i].yes;
            pthread_mutex_unlock(&read_answers_lock);
            return r;
        }
    return -1;
}

static void drop_lock(void)
{
    pthread_mutex_unlock(&read_answers_lock);
}

static void keep_answer(uid_t uid, gid_t gid, const gid_t *groups, int n, const char *path, bool yes)
{
    if (nread_answers < READ_ANSWERS_MAX && strlen(path) < PATH_MAX &&
        (size_t)n <= sizeof(read_answers[0].groups) / sizeof(gid_t)) {
        struct read_answer *a = &read_answers[nread_answers++];
        a->uid = uid;
        a->gid = gid;
        a->ngroups = n;
        memcpy(a->groups, groups, (size_t)n * sizeof(*groups));
        snprintf(a->path, sizeof(a->path), "%s", path);
        a->yes = yes;
    }
    pthread_mutex_unlock(&read_answers_lock);
}

/* Whether pid's credentials (filesystem uid and gid, supplementary groups)
 * can open path for reading, as its dlopen will: a child of ours takes
 * them on and tries, so that directory search bits, ACLs and the like are
 * judged by the kernel itself. Only root can take on another user's
 * credentials; anyone else can only profile processes of their own user,
 * which read what that user reads, and is answered yes. Also yes when the
 * check itself cannot run: the dlopen then says what is wrong. */
static bool target_can_read(pid_t pid, const struct inj_target_status *st, const char *path)
{
    gid_t groups[256];
    int n, status, known;
    pid_t child;

    if (geteuid() != 0 || st->uid[3] == 0)
        return true;
    n = target_groups(pid, groups, (int)(sizeof(groups) / sizeof(groups[0])));
    if (n < 0)
        return true;
    if ((known = known_answer(st->uid[3], st->gid[3], groups, n, path)) >= 0)
        return known;
    child = fork();
    if (child < 0) {
        drop_lock();
        return true;
    }
    if (child == 0) {
        /* Only system calls from here: the cli may have other threads. */
        if (setgroups((size_t)n, groups) || setresgid(st->gid[3], st->gid[3], st->gid[3]) ||
            setresuid(st->uid[3], st->uid[3], st->uid[3]))
            _exit(2);
        _exit(open(path, O_RDONLY | O_CLOEXEC) < 0 ? 1 : 0);
    }
    while (waitpid(child, &status, 0) < 0)
        if (errno != EINTR) {
            drop_lock();
            return true;
        }
    if (!WIFEXITED(status) || WEXITSTATUS(status) > 1) {
        drop_lock();
        return true; /* the check did not run: not kept */
    }
    keep_answer(st->uid[3], st->gid[3], groups, n, path, WEXITSTATUS(status) == 0);
    return WEXITSTATUS(status) == 0;
}

static int copy_into_target(pid_t pid, const char *real, const char *why, char *out, size_t outlen,
                            bool verbose, char *err, size_t errlen)
{
    static const char *const dirs[] = { "/tmp", "/dev/shm", "/var/tmp" };
    struct inj_target_status st;
    const char *base = strrchr(real, '/') ? strrchr(real, '/') + 1 : real;
    int last = ENOENT;

    if (inj_target_status(pid, &st))
        return inj_err(err, errlen, INJ_ENOPROC, "no such process: pid %d", (int)pid);
    for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
        char dir[PATH_MAX], tmp[PATH_MAX], final[PATH_MAX];
        int in, fd, r;

        snprintf(dir, sizeof(dir), "/proc/%d/root%s/.heapinject-%u", (int)pid, dirs[i],
                 st.uid[1]);
        if (snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, base) >= (int)sizeof(tmp) ||
            snprintf(final, sizeof(final), "%s/%s", dir, base) >= (int)sizeof(final)) {
            last = ENAMETOOLONG;
            continue;
        }
        /* Twice: another session's cleanup may remove the directory,
         * empty, between our mkdir and our mkstemp. */
        fd = -1;
        for (int attempt = 0; attempt < 2 && fd < 0; attempt++) {
            r = make_private_dir(dir, st.uid[1], st.gid[1]);
            if (r) {
                errno = -r;
                break;
            }
            memcpy(tmp + strlen(tmp) - 6, "XXXXXX", 6);
            fd = mkstemp(tmp);
            if (fd < 0 && errno != ENOENT)
                break;
        }
        if (fd < 0) {
            last = errno;
            continue;
        }
        in = open(real, O_RDONLY | O_CLOEXEC);
        r = in < 0 ? -errno : copy_fd(in, fd);
        if (in >= 0)
            close(in);
        if (!r && fchmod(fd, 0644))
            r = -errno;
        if (!r && geteuid() == 0 && fchown(fd, st.uid[1], st.gid[1]))
            r = -errno;
        if (close(fd) && !r)
            r = -errno;
        if (!r && rename(tmp, final))
            r = -errno;
        if (r) {
            unlink(tmp);
            last = -r;
            continue;
        }
        snprintf(out, outlen, "%s/.heapinject-%u/%s", dirs[i], st.uid[1], base);
        inj_log(verbose, "pid %d %s: copied %s to %s in its view", (int)pid, why, real, out);
        return INJ_OK;
    }
    return inj_err(err, errlen, last == EACCES || last == EPERM ? INJ_EPERM : INJ_EINTERNAL,
                   "pid %d %s and copying %s into its /tmp, /dev/shm or /var/tmp failed: %s",
                   (int)pid, why, real, strerror(last));
}

int inj_libpath_prepare(pid_t pid, const char *library, char *out, size_t outlen,
                        bool verbose, char *err, size_t errlen)
{
    char real[PATH_MAX];
    struct inj_target_status tst;
    struct stat st;

    if (!library || !*library)
        return inj_err(err, errlen, INJ_ELIB, "no library given");
    if (!realpath(library, real))
        return inj_err(err, errlen, INJ_ELIB, "library %s: %s", library, strerror(errno));
    if (stat(real, &st))
        return inj_err(err, errlen, INJ_ELIB, "library %s: %s", library, strerror(errno));
    if (!S_ISREG(st.st_mode))
        return inj_err(err, errlen, INJ_ELIB, "library %s is not a regular file", library);
    if (access(real, R_OK))
        return inj_err(err, errlen, INJ_ELIB, "library %s: %s", library, strerror(errno));
    if (inj_target_other_mntns(pid))
        return copy_into_target(pid, real, "is in another mount namespace", out, outlen, verbose,
                                err, errlen);
    if (inj_target_status(pid, &tst))
        return inj_err(err, errlen, INJ_ENOPROC, "no such process: pid %d", (int)pid);
    if (!target_can_read(pid, &tst, real)) {
        char why[64];

        snprintf(why, sizeof(why), "cannot read the library as uid %u", tst.uid[3]);
        return copy_into_target(pid, real, why, out, outlen, verbose, err, errlen);
    }
    if (strlen(real) >= outlen)
        return inj_err(err, errlen, INJ_ELIB, "library path too long: %s", real);
    snprintf(out, outlen, "%s", real);
    return INJ_OK;
}

void inj_libpath_cleanup(pid_t pid, const char *library, const char *target_path, bool verbose)
{
    char real[PATH_MAX], path[PATH_MAX + 64];

    if (!library || !target_path || !target_path[0] || !realpath(library, real) || !strcmp(real, target_path))
        return; /* not a copy: the library itself */
    if (snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, target_path) >= (int)sizeof(path))
        return;
    if (unlink(path) == 0)
        inj_log(verbose, "removed the copy %s from pid %d's mount namespace", target_path, (int)pid);
    /* Its directory too, once empty (another session's copy keeps it). */
    *strrchr(path, '/') = 0;
    rmdir(path);
}
