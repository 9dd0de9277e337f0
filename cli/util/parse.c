/* parse.c - byte counts and durations as the user writes them. */
#include "cli/util/parse.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!s || !isdigit((unsigned char)s[0]))
        return -EINVAL;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -EINVAL;
    unsigned shift = 0;
    switch (tolower((unsigned char)*end)) {
    case '\0': break;
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    case 't': shift = 40; end++; break;
    case 'b': break;
    default: return -EINVAL;
    }
    if (shift && (!strcasecmp(end, "ib") || !strcasecmp(end, "b")))
        end += strlen(end);
    if (!shift && !strcasecmp(end, "b"))
        end++;
    if (*end)
        return -EINVAL;
    if (shift && v > (~0ull >> shift))
        return -EINVAL;
    *out = (uint64_t)v << shift;
    return 0;
}

int cli_parse_duration(const char *s, double *out)
{
    char *end;
    if (!s || !(isdigit((unsigned char)s[0]) || s[0] == '.'))
        return -EINVAL;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || !isfinite(v) || v < 0)
        return -EINVAL;
    if (!*end || !strcmp(end, "s"))
        ;
    else if (!strcmp(end, "ms"))
        v /= 1000.0;
    else if (!strcmp(end, "m") || !strcmp(end, "min"))
        v *= 60.0;
    else if (!strcmp(end, "h"))
        v *= 3600.0;
    else
        return -EINVAL;
    *out = v;
    return 0;
}
