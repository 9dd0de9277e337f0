/* pressure.c - memory pressure on the target (see pressure.h). Agent thread
 * only; no heap, no stdio: fixed buffers on the agent's stack and here. */
#include "payload/serve/pressure.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "common/proto.h"

#define PR_PATH_MAX 512
#define PR_LINE_MAX 1024
#define PR_MAX_LEVELS 32
#define PR_UNLIMITED (1ull << 62) /* v1 says "no limit" as about 2^63 rounded to pages */

/* Set by pl_pressure_init (agent thread). */
static struct {
    int kind;                       /* HI_PRESSURE_CGROUP_V1/_V2, 0: none */
    char usage[PR_PATH_MAX];        /* the limited cgroup's usage file */
    char limit[PR_PATH_MAX];        /* and its limit file */
    char stat[PR_PATH_MAX];         /* and its memory.stat */
} pl_pr;
static int pl_pr_whole; /* pl_pr is complete (atomic: a fork may come mid-way) */

/* Reads up to len-1 bytes of a small file, NUL-terminated. Bytes read or -1. */
static long read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t have = 0;
    while (have + 1 < len) {
        ssize_t n = read(fd, buf + have, len - 1 - have);
        if (n <= 0)
            break;
        have += (size_t)n;
    }
    close(fd);
    buf[have] = '\0';
    return (long)have;
}

/* Decimal at s; -1 when there is none. */
static int parse_u64(const char *s, uint64_t *v)
{
    uint64_t x = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9' && digits < 20; s++, digits++)
        x = x * 10 + (uint64_t)(*s - '0');
    *v = x;
    return digits ? 0 : -1;
}

static int read_u64(const char *path, uint64_t *v)
{
    char buf[64];
    if (read_small(path, buf, sizeof(buf)) <= 0)
        return -1;
    if (!strncmp(buf, "max", 3)) { /* v2: no limit */
        *v = UINT64_MAX;
        return 0;
    }
    return parse_u64(buf, v);
}

/* Calls fn on every line of path (lines longer than PR_LINE_MAX are
 * skipped) until it returns nonzero. */
static void each_line(const char *path, int (*fn)(char *line, void *arg), void *arg)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char buf[4096], line[PR_LINE_MAX];
    size_t ll = 0;
    int skip = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof(buf))) > 0) {
        for (ssize_t i = 0; i < n; i++) {
            if (buf[i] != '\n') {
                if (ll + 1 < sizeof(line))
                    line[ll++] = buf[i];
                else
                    skip = 1;
                continue;
            }
            line[ll] = '\0';
            int stop = !skip && fn(line, arg);
            ll = 0;
            skip = 0;
            if (stop) {
                close(fd);
                return;
            }
        }
    }
    close(fd);
}

/* Splits line at spaces into at most max fields. Returns the count. */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    for (char *p = line; *p && n < max;) {
        while (*p == ' ')
            *p++ = '\0';
        if (!*p)
            break;
        f[n++] = p;
        while (*p && *p != ' ')
            p++;
    }
    return n;
}

struct cg_find {
    char v1[PR_PATH_MAX], v2[PR_PATH_MAX]; /* the cgroup path in each hierarchy, "" if none */
};

/* /proc/self/cgroup: "0::/path" (v2), "N:cpu,memory:/path" (v1). */
static int cgroup_line(char *line, void *arg)
{
    struct cg_find *cf = arg;
    char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
    if (!b)
        return 0;
    *b = '\0';
    const char *ctrls = a + 1, *path = b + 1;
    if (strlen(path) >= PR_PATH_MAX)
        return 0;
    if (!strcmp(line, "0") && !ctrls[0]) {
        strcpy(cf->v2, path);
        return 0;
    }
    for (const char *c = ctrls; *c;) {
        const char *e = strchr(c, ',');
        size_t len = e ? (size_t)(e - c) : strlen(c);
        if (len == 6 && !memcmp(c, "memory", 6))
            strcpy(cf->v1, path);
        c += len + (e != NULL);
    }
    return 0;
}

struct mount_find {
    int v2;                      /* looking for cgroup2, else v1 memory */
    char root[PR_PATH_MAX];      /* the mount's root within the hierarchy */
    char point[PR_PATH_MAX];     /* where it is mounted; "" not found */
};

/* /proc/self/mountinfo: "id parent maj:min root point opts [tags] - type src superopts". */
static int mount_line(char *line, void *arg)
{
    struct mount_find *mf = arg;
    char *f[32];
    int n = fields(line, f, 32), dash = -1;
    for (int i = 6; i < n; i++)
        if (!strcmp(f[i], "-")) {
            dash = i;
            break;
        }
    if (dash < 0 || dash + 3 >= n || strchr(f[4], '\\'))
        return 0; /* a mount point with escaped characters: not a cgroup one */
    const char *type = f[dash + 1], *opts = f[dash + 3];
    int match = mf->v2 ? !strcmp(type, "cgroup2") : !strcmp(type, "cgroup") && (strstr(opts, ",memory") ||
                                                                                 !strncmp(opts, "memory", 6));
    if (!match || strlen(f[3]) >= PR_PATH_MAX || strlen(f[4]) >= PR_PATH_MAX)
        return 0;
    strcpy(mf->root, f[3]);
    strcpy(mf->point, f[4]);
    return 1;
}

/* The directory of cgroup path `cg` under the hierarchy's mount. 0 or -1. */
static int cgroup_dir(int v2, const char *cg, char *dir, size_t len)
{
    struct mount_find mf;
    memset(&mf, 0, sizeof(mf));
    mf.v2 = v2;
    each_line("/proc/self/mountinfo", mount_line, &mf);
    if (!mf.point[0])
        return -1;
    size_t rl = strlen(mf.root);
    /* A mount of a sub-tree (a container's): the path goes on from its root. */
    if (strcmp(mf.root, "/") && !strncmp(cg, mf.root, rl) && (cg[rl] == '/' || !cg[rl]))
        cg += rl;
    size_t pl = strlen(mf.point), cl = strlen(cg);
    if (pl + cl + 1 > len)
        return -1;
    memcpy(dir, mf.point, pl);
    memcpy(dir + pl, cg, cl + 1);
    while (strlen(dir) > 1 && dir[strlen(dir) - 1] == '/')
        dir[strlen(dir) - 1] = '\0';
    return (int)pl; /* the mount point's length: the walk up stops there */
}

static uint64_t mem_total(void)
{
    char buf[256];
    uint64_t kb;
    if (read_small("/proc/meminfo", buf, sizeof(buf)) <= 0 || strncmp(buf, "MemTotal:", 9))
        return 0;
    const char *p = buf + 9;
    while (*p == ' ')
        p++;
    return parse_u64(p, &kb) == 0 ? kb * 1024 : 0;
}

/* From the process's own cgroup up to the hierarchy's root: the first
 * with a limit below the machine's memory. 1 found, 0 not. */
static int find_limit(int v2, const char *cg)
{
    char dir[PR_PATH_MAX], lim[PR_PATH_MAX];
    int top = cgroup_dir(v2, cg, dir, sizeof(dir) - 32);
    if (top < 0)
        return 0;
    uint64_t total = mem_total();
    const char *limf = v2 ? "/memory.max" : "/memory.limit_in_bytes";
    const char *usef = v2 ? "/memory.current" : "/memory.usage_in_bytes";
    for (int level = 0; level < PR_MAX_LEVELS; level++) {
        uint64_t v;
        strcpy(lim, dir);
        strcat(lim, limf);
        if (read_u64(lim, &v) == 0 && v < PR_UNLIMITED && (!total || v < total)) {
            pl_pr.kind = v2 ? HI_PRESSURE_CGROUP_V2 : HI_PRESSURE_CGROUP_V1;
            strcpy(pl_pr.limit, lim);
            strcpy(pl_pr.usage, dir);
            strcat(pl_pr.usage, usef);
            strcpy(pl_pr.stat, dir);
            strcat(pl_pr.stat, "/memory.stat");
            return 1;
        }
        char *slash = strrchr(dir, '/');
        if (!slash || slash - dir < top)
            return 0;
        *slash = '\0';
    }
    return 0;
}

int pl_pressure_init(int forked)
{
    if (forked && __atomic_load_n(&pl_pr_whole, __ATOMIC_ACQUIRE))
        return pl_pr.kind;
    __atomic_store_n(&pl_pr_whole, 0, __ATOMIC_RELEASE);
    struct cg_find cf;
    memset(&cf, 0, sizeof(cf));
    memset(&pl_pr, 0, sizeof(pl_pr));
    each_line("/proc/self/cgroup", cgroup_line, &cf);
    /* v2 first; on a hybrid machine the memory controller is v1's, and
     * the unified tree has no memory.max files. */
    if (!(cf.v2[0] && find_limit(1, cf.v2)) && cf.v1[0])
        find_limit(0, cf.v1);
    __atomic_store_n(&pl_pr_whole, 1, __ATOMIC_RELEASE);
    return pl_pr.kind;
}

/* MemTotal and MemAvailable in bytes. 0 or -1. */
static int meminfo(uint64_t *total, uint64_t *avail)
{
    char buf[512];
    int got = 0;
    if (read_small("/proc/meminfo", buf, sizeof(buf)) <= 0)
        return -1;
    for (char *line = buf; line && *line && got != 3; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
        uint64_t *out = !strncmp(line, "MemTotal:", 9) ? total : !strncmp(line, "MemAvailable:", 13) ? avail : NULL;
        if (!out)
            continue;
        const char *p = strchr(line, ':') + 1;
        while (*p == ' ')
            p++;
        uint64_t kb;
        if (parse_u64(p, &kb) == 0) {
            *out = kb * 1024;
            got |= out == total ? 1 : 2;
        }
    }
    return got == 3 ? 0 : -1;
}

struct stat_find {
    const char *key;   /* "total_inactive_file " (v1, the cgroup and below) or "inactive_file " */
    uint64_t value;
};

static int stat_line(char *line, void *arg)
{
    struct stat_find *sf = arg;
    size_t kl = strlen(sf->key);
    if (strncmp(line, sf->key, kl))
        return 0;
    parse_u64(line + kl, &sf->value);
    return 1;
}

/* Page cache the kernel can take back at once (inactive file pages): a
 * cgroup full of it is not near an OOM kill. 0 when unknown. */
static uint64_t reclaimable(void)
{
    struct stat_find sf = { pl_pr.kind == HI_PRESSURE_CGROUP_V1 ? "total_inactive_file " : "inactive_file ", 0 };
    each_line(pl_pr.stat, stat_line, &sf);
    return sf.value;
}

uint64_t pl_pressure_room(void)
{
    uint64_t usage, limit;
    if (!pl_pr.kind || read_u64(pl_pr.usage, &usage) < 0 || read_u64(pl_pr.limit, &limit) < 0 || !limit ||
        limit >= PR_UNLIMITED)
        return UINT64_MAX;
    uint64_t cache = reclaimable();
    usage -= cache < usage ? cache : usage;
    return limit > usage ? limit - usage : 0;
}

int pl_pressure_check(struct pl_pressure *p)
{
    memset(p, 0, sizeof(*p));
    if (pl_pr.kind) {
        uint64_t usage, limit;
        if (read_u64(pl_pr.usage, &usage) == 0 && read_u64(pl_pr.limit, &limit) == 0 && limit &&
            limit < PR_UNLIMITED) {
            p->kind = (uint32_t)pl_pr.kind;
            p->usage = usage;
            p->limit = limit;
            /* memory.stat only when usage alone is that high: usage
             * counts page cache, and only the rest has to fit. */
            uint64_t high = limit / 100 * PL_PRESSURE_CGROUP_PCT;
            if (usage >= high) {
                uint64_t cache = reclaimable();
                if (usage - (cache < usage ? cache : usage) >= high)
                    return 1;
            }
        }
    }
    uint64_t total = 0, avail = 0;
    if (meminfo(&total, &avail) == 0 && total) {
        if (avail < total / 100 * PL_PRESSURE_SYSTEM_PCT) {
            p->kind = HI_PRESSURE_SYSTEM;
            p->usage = total - avail;
            p->limit = total;
            return 1;
        }
        if (!p->kind) {
            p->kind = HI_PRESSURE_SYSTEM;
            p->usage = total - avail;
            p->limit = total;
        }
    }
    return 0;
}
