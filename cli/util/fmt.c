/* fmt.c - human-readable numbers and durations (parsing them: parse.c). */
#include "cli/util/fmt.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *cli_fmt_bytes(double b, char *buf, size_t len)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB" };
    double a = fabs(b);
    int u = 0;
    while (a >= 1024.0 && u < 5) {
        a /= 1024.0;
        b /= 1024.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", b);
    else
        snprintf(buf, len, a >= 100 ? "%.0f %s" : "%.1f %s", b, unit[u]);
    return buf;
}

const char *cli_fmt_count(double n, char *buf, size_t len)
{
    static const char *const unit[] = { "", "k", "M", "G", "T" };
    double a = fabs(n);
    int u = 0;
    while (a >= 1000.0 && u < 4) {
        a /= 1000.0;
        n /= 1000.0;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f", n);
    else
        snprintf(buf, len, a >= 100 ? "%.0f%s" : "%.1f%s", n, unit[u]);
    return buf;
}

const char *cli_fmt_duration(double s, char *buf, size_t len)
{
    if (!(s >= 0))
        s = 0;
    if (s > 1e12) /* the hours must fit an int */
        s = 1e12;
    if (s < 10)
        snprintf(buf, len, "%.1f s", s);
    else if (s < 60)
        snprintf(buf, len, "%.0f s", s);
    else if (s < 3600)
        snprintf(buf, len, "%d min %d s", (int)(s / 60), (int)fmod(s, 60));
    else
        snprintf(buf, len, "%d h %d min", (int)(s / 3600), (int)fmod(s / 60, 60));
    return buf;
}

const char *cli_fmt_printable(const char *in, char *buf, size_t len)
{
    size_t o = 0;

    if (!len)
        return buf;
    for (; *in; in++) {
        unsigned char c = (unsigned char)*in;
        char esc[5];
        size_t n = 1;

        if (c < 0x20 || c == 0x7f) {
            snprintf(esc, sizeof(esc), "\\x%02x", c);
            n = 4;
        } else if (c == '\\') {
            esc[0] = esc[1] = '\\';
            n = 2;
        } else {
            esc[0] = (char)c;
        }
        if (o + n >= len)
            break;
        memcpy(buf + o, esc, n);
        o += n;
    }
    buf[o] = '\0';
    return buf;
}

const char *cli_fmt_noun(double n, const char *one, const char *many)
{
    return n >= 0.5 && n < 1.5 ? one : many;
}
