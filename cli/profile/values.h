/* values.h - which value of a stack a report shows (--value). */
#ifndef HI_CLI_PROFILE_VALUES_H
#define HI_CLI_PROFILE_VALUES_H

#include "cli/profile/profile.h"

enum cli_value {
    CLI_VALUE_LIVE_BYTES,
    CLI_VALUE_ALLOC_BYTES,
    CLI_VALUE_LIVE_OBJECTS,
    CLI_VALUE_ALLOC_OBJECTS,
};

/* Parses a --value name (NULL = live_bytes). 0 or -EINVAL. */
int cli_format_value_parse(const char *name, enum cli_value *v);
const char *cli_format_value_name(enum cli_value v);
double cli_format_stack_value(const struct cli_stack *s, enum cli_value v);

#endif /* HI_CLI_PROFILE_VALUES_H */
