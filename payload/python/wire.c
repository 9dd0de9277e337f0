/* wire.c - Python's snapshot records (wire.h). */
#include "payload/python/wire.h"

#include <string.h>

#include "common/proto.h"
#include "payload/python/sample.h"

static uint16_t cut_len(const char *s, size_t room)
{
    size_t n = strnlen(s, room);
    return (uint16_t)n;
}

int pl_py_send(pl_send_fn send, void *ctx, unsigned char *buf, uint32_t len)
{
    struct hi_snap_python st;
    pl_py_sample_report(&st);
    if (st.state == HI_PYTHON_NONE)
        return 0;
    int err = send(ctx, HI_MSG_SNAP_PYTHON, &st, sizeof(st));
    const struct pl_py_codes *c = pl_py_sample_codes();
    if (err || !c)
        return err;
    uint32_t used = 0;
    for (uint32_t id = 1; id <= PL_PY_CODES && !err; id++) {
        const struct pl_py_code *e = pl_py_codes_entry(c, id);
        if (!e)
            continue;
        struct hi_snap_pycode h = { id, e->firstlineno, cut_len(e->name, sizeof(e->name)),
                                    cut_len(e->file, sizeof(e->file)) };
        uint32_t need = (uint32_t)sizeof(h) + h.name_len + h.file_len;
        if (used + need > len) {
            err = send(ctx, HI_MSG_SNAP_PYCODE, buf, used);
            used = 0;
        }
        memcpy(buf + used, &h, sizeof(h));
        memcpy(buf + used + sizeof(h), e->name, h.name_len);
        memcpy(buf + used + sizeof(h) + h.name_len, e->file, h.file_len);
        used += need;
    }
    if (!err && used)
        err = send(ctx, HI_MSG_SNAP_PYCODE, buf, used);
    return err;
}

uint32_t pl_py_native_only(const uintptr_t *pcs, uint32_t n, uintptr_t *out)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (hi_frame_kind(pcs[i]) == HI_FRAME_NATIVE)
            out[k++] = pcs[i];
    return k;
}
