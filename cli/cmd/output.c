/* output.c - writing reports to stdout or files. */
#include "cli/cmd/output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/target/proc.h"

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

/* Writes through path as it is: a device, a fifo, a symlink's target. */
static int write_in_place(const struct cli_profile *p, const struct cli_report_options *ro, const char *path)
{
    int rc;
    FILE *f = fopen(path, "we");
    if (!f) {
        rc = -errno;
        fprintf(stderr, "heapinject: cannot open %s: %s\n", path, strerror(-rc));
        return rc;
    }
    rc = cli_report_write(p, ro, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc < 0)
        fprintf(stderr, "heapinject: writing %s failed: %s\n", path, strerror(-rc));
    return rc;
}

int cli_output_write(const struct cli_profile *p, const struct cli_report_options *ro, const char *path)
{
    int rc;
    if (!path || !strcmp(path, "-")) {
        rc = cli_report_write(p, ro, stdout);
        if (rc < 0)
            fprintf(stderr, "heapinject: writing the report to stdout failed: %s\n", strerror(-rc));
        return rc;
    }
    /* Only a regular file (or a new one) is written beside its name and
     * renamed into place: renaming over /dev/null, a fifo or a symlink
     * would replace the device, the pipe or the link itself. */
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return write_in_place(p, ro, path);
    size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    if (!tmp)
        return -ENOMEM;
    snprintf(tmp, tl, "%s.tmp.%d", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        rc = -errno;
        if (fd >= 0)
            close(fd);
        fprintf(stderr, "heapinject: cannot create %s: %s\n", path, strerror(-rc));
        free(tmp);
        return rc;
    }
    rc = cli_report_write(p, ro, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -errno;
    if (rc == 0 && rename(tmp, path) < 0)
        rc = -errno;
    if (rc < 0) {
        unlink(tmp);
        fprintf(stderr, "heapinject: writing %s failed: %s\n", path, strerror(-rc));
    }
    free(tmp);
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
