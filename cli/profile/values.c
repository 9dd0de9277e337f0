/* values.c - which value of a stack a report shows (--value). */
#include "cli/profile/values.h"

#include <errno.h>
#include <string.h>

static const char *const value_names[] = {
    [CLI_VALUE_LIVE_BYTES] = "live_bytes",
    [CLI_VALUE_ALLOC_BYTES] = "alloc_bytes",
    [CLI_VALUE_LIVE_OBJECTS] = "live_objects",
    [CLI_VALUE_ALLOC_OBJECTS] = "alloc_objects",
};

int cli_value_parse(const char *name, enum cli_value *v)
{
    if (!name) {
        *v = CLI_VALUE_LIVE_BYTES;
        return 0;
    }
    for (size_t i = 0; i < sizeof(value_names) / sizeof(value_names[0]); i++) {
        if (!strcmp(name, value_names[i])) {
            *v = (enum cli_value)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *cli_value_name(enum cli_value v)
{
    return value_names[v];
}

double cli_value_of_stack(const struct cli_stack *s, enum cli_value v)
{
    switch (v) {
    case CLI_VALUE_LIVE_BYTES: return s->live_bytes;
    case CLI_VALUE_ALLOC_BYTES: return s->alloc_bytes;
    case CLI_VALUE_LIVE_OBJECTS: return s->live_objects;
    case CLI_VALUE_ALLOC_OBJECTS: return s->alloc_objects;
    }
    return 0;
}
