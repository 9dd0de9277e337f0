/* report_many.c - several saved profiles read as one (report_many.h). */
#include "cli/cmd/report_many.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/profile/merge.h"
#include "cli/util/exitcode.h"

int cli_report_load_many(const char *cmd, char *const *files, int n, cli_report_loader load, struct cli_profile *out)
{
    if (n == 1)
        return load(cmd, files[0], out);
    struct cli_profile *in = calloc((size_t)n, sizeof(*in));
    if (!in) {
        fprintf(stderr, "%s: %s\n", cmd, strerror(ENOMEM));
        return CLI_EXIT_FAILURE;
    }
    for (int i = 0; i < n; i++) {
        int code = load(cmd, files[i], &in[i]);
        if (code != CLI_EXIT_OK) {
            for (int k = 0; k < i; k++)
                cli_profile_free(&in[k]);
            free(in);
            return code;
        }
    }
    /* The merge frees the inputs in every case. */
    int rc = cli_profile_merge(in, (size_t)n, (const char *const *)files, stderr, out);
    free(in);
    if (rc == -EINVAL)
        return CLI_EXIT_USAGE; /* a census among them: said by the merge */
    if (rc < 0) {
        fprintf(stderr, "%s: %s\n", cmd, strerror(-rc));
        return CLI_EXIT_FAILURE;
    }
    return CLI_EXIT_OK;
}
