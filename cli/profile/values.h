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
int cli_value_parse(const char *name, enum cli_value *v);
const char *cli_value_name(enum cli_value v);
double cli_value_of_stack(const struct cli_stack *s, enum cli_value v);

#endif /* HI_CLI_PROFILE_VALUES_H */
