/* python_note.c - the report's line on Python frames (python_note.h). */
#include "cli/report/python_note.h"

#include <inttypes.h>
#include <stdio.h>

#include "cli/util/buf.h"

static void part(char *buf, size_t len, size_t *at, int *n, uint64_t v, const char *what)
{
    if (!v || *at >= len)
        return;
    int w = snprintf(buf + *at, len - *at, "%s%" PRIu64 " %s", *n ? ", " : ": ", v, what);
    if (w > 0)
        *at += (size_t)w;
    (*n)++;
}

int cli_python_note(const struct cli_profile *p, char *buf, size_t len)
{
    const struct hi_snap_python *st = &p->python.st;
    if (!p->python.have || st->state == HI_PYTHON_NONE || len == 0)
        return 0;
    if (st->state != HI_PYTHON_READ) {
        snprintf(buf, len, "Python: %s; stacks show the interpreter's native frames only",
                 st->why[0] ? st->why : "no Python frames");
        return 1;
    }
    uint64_t without = st->no_state + st->not_valid + st->subinterp;
    size_t at = 0;
    int w = snprintf(buf, len, "Python 3.%u: %" PRIu64 " of %" PRIu64 " samples carry Python frames", st->minor,
                     st->with_frames, st->with_frames + without);
    at = w > 0 ? (size_t)w : 0;
    if (st->unplaced && at < len) {
        w = snprintf(buf + at, len - at,
                     " (%" PRIu64 " after a native stack cut short before the eval loop: frames between missing)",
                     st->unplaced);
        at += w > 0 ? (size_t)w : 0;
    }
    if (without && at < len) {
        w = snprintf(buf + at, len - at, "; %" PRIu64 " native only", without);
        at += w > 0 ? (size_t)w : 0;
        int n = 0;
        part(buf, len, &at, &n, st->no_state, "on threads running no Python code");
        part(buf, len, &at, &n, st->not_valid, "whose frame chain did not validate (dropped, never guessed)");
        part(buf, len, &at, &n, st->subinterp, "in a sub-interpreter (its frames are not read)");
    }
    if (st->cut && at < len) {
        w = snprintf(buf + at, len - at,
                     "; %" PRIu64 " stacks deeper than %u frames cut (the innermost kept, the last frame says so)",
                     st->cut, HI_MAX_FRAMES);
        at += w > 0 ? (size_t)w : 0;
    }
    if (st->unnamed && at < len)
        snprintf(buf + at, len - at, "; %" PRIu64 " Python frames unnamed (\"?\": the table of code objects was full)",
                 st->unnamed);
    return 1;
}
