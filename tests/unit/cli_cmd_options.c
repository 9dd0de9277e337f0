/* cli_options.c - command-line parsing: values, units, defaults, and the
 * messages a user gets for mistakes; plus sizes, durations and the names of
 * numbered report files. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/util/parse.h"
#include "cli/cmd/options.h"
#include "cli/cmd/output.h"
#include "common/config.h"

static struct cli_options o;
static char err[512];

#define ARGV(...) ((char *[]){ __VA_ARGS__, NULL })
#define ARGC(...) ((int)(sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *)))
#define PARSE(cmd, ...) cli_options_parse(cmd, ARGC(__VA_ARGS__), ARGV(__VA_ARGS__), &o, err, sizeof(err))

Test(cli_options, one_shot_with_everything)
{
    int rc = PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1234", "--duration", "2.5", "--rate", "64K", "--leaks",
                   "--format", "json", "-o", "out.json", "--via", "gdb", "--dump-every", "1G",
                   "--dump-on-peak", "--top", "25");
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(o.pid, 1234);
    cr_expect_float_eq(o.duration_s, 2.5, 1e-9);
    cr_expect_eq(o.rate, 65536);
    cr_expect(o.leaks);
    cr_expect_str_eq(o.format, "json");
    cr_expect_str_eq(o.output, "out.json");
    cr_expect_eq(o.via, INJ_VIA_GDB);
    cr_expect_eq(o.dump_every, 1ull << 30);
    cr_expect(o.dump_on_peak);
    cr_expect_eq(o.top, 25);
}

Test(cli_options, defaults)
{
    cr_assert_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "--pid=77"), 0, "%s", err);
    cr_expect_eq(o.pid, 77);
    cr_expect(o.duration_s < 0, "no duration: until Ctrl-C");
    cr_expect_eq(o.rate, HI_DEFAULT_RATE); /* the default is applied here, once */
    cr_expect_str_eq(o.format, "text");
    cr_expect_null(o.output);
    cr_expect_eq(o.via, INJ_VIA_PTRACE);
    cr_expect_eq(o.ttl_s, 600);
    cr_expect_eq(o.by, CLI_VIEW_STACK);
}

Test(cli_options, by_picks_a_view_for_the_reporting_commands)
{
    cr_assert_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--by", "function"), 0, "%s", err);
    cr_expect_eq(o.by, CLI_VIEW_FUNCTION);
    cr_assert_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "1", "--by=module"), 0, "%s", err);
    cr_expect_eq(o.by, CLI_VIEW_MODULE);
    cr_assert_eq(PARSE(CLI_CMD_REPORT, "report", "f.json", "--by", "thread"), 0, "%s", err);
    cr_expect_eq(o.by, CLI_VIEW_THREAD);
    cr_assert_eq(PARSE(CLI_CMD_DIFF, "diff", "a.json", "b.json", "--by", "stack"), 0, "%s", err);
    cr_expect_eq(o.by, CLI_VIEW_STACK);
    cr_expect_eq(PARSE(CLI_CMD_REPORT, "report", "f.json", "--by", "file"), -EINVAL);
    cr_expect(strstr(err, "--by: 'file' is not one of stack, function, module, thread") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--by", "function"), -EINVAL);
    cr_expect(strstr(err, "option --by does not apply to this command") != NULL, "%s", err);
}

Test(cli_options, pid_is_required_and_checked)
{
    cr_expect_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot"), -EINVAL);
    cr_expect(strstr(err, "-p PID is required") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "12abc"), -EINVAL);
    cr_expect(strstr(err, "'12abc' is not a process id") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_DETACH, "detach", "-p", "-5"), -EINVAL);
    cr_expect_eq(PARSE(CLI_CMD_DETACH, "detach", "-p"), -EINVAL);
    cr_expect(strstr(err, "needs a value") != NULL, "%s", err);
}

Test(cli_options, bad_values_say_what_is_expected)
{
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--rate", "12x"), -EINVAL);
    cr_expect(strstr(err, "--rate: '12x' is not a byte count") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--rate", "0"), -EINVAL);
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--duration", "soon"), -EINVAL);
    cr_expect(strstr(err, "--duration") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--format", "xml"), -EINVAL);
    cr_expect(strstr(err, "unknown format 'xml' (known: text, json, pprof") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--via", "magic"), -EINVAL);
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--top", "0"), -EINVAL);
    cr_expect_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "1", "--value", "weight"), -EINVAL);
}

Test(cli_options, options_of_other_commands_are_refused_by_name)
{
    cr_expect_eq(PARSE(CLI_CMD_DETACH, "detach", "-p", "1", "--rate", "4K"), -EINVAL);
    cr_expect(strstr(err, "detach: option --rate does not apply to this command") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "1", "--duration", "3"), -EINVAL);
    cr_expect_eq(PARSE(CLI_CMD_STATUS, "status", "-p", "1", "--bogus"), -EINVAL);
    cr_expect(strstr(err, "unknown option '--bogus'") != NULL, "%s", err);
    cr_expect_eq(PARSE(CLI_CMD_STATUS, "status", "-p", "1", "extra"), -EINVAL);
    cr_expect(strstr(err, "unexpected argument 'extra'") != NULL, "%s", err);
}

Test(cli_options, series_needs_an_output_file)
{
    cr_expect_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--dump-every", "100M"), -EINVAL);
    cr_expect(strstr(err, "give -o FILE") != NULL, "%s", err);
}

Test(cli_options, help_is_printed_and_not_an_error, .init = cr_redirect_stdout)
{
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "--help"), 0);
    cr_expect(o.help);
    fflush(stdout);
    char buf[256] = "";
    FILE *f = cr_get_redirected_stdout();
    cr_assert_not_null(fgets(buf, sizeof(buf), f));
    cr_expect(strncmp(buf, "usage: heapinject attach -p PID", 31) == 0, "%s", buf);
}

Test(cli_options, help_of_reporting_commands_explains_by, .init = cr_redirect_stdout)
{
    cr_assert_eq(PARSE(CLI_CMD_REPORT, "report", "--help"), 0);
    fflush(stdout);
    char buf[8192] = "";
    size_t n = fread(buf, 1, sizeof(buf) - 1, cr_get_redirected_stdout());
    buf[n] = '\0';
    cr_expect(strstr(buf, "--by VIEW") != NULL, "%s", buf);
    cr_expect(strstr(buf, "first sample") != NULL, "%s", buf);
    cr_expect(strstr(buf, "other formats ignore --by") != NULL, "%s", buf);
}

Test(cli_options, ttl_rounds_up_and_zero_means_never)
{
    /* A one-shot session ends with its connection: it has no time-to-live. */
    cr_assert_neq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--ttl", "10m"), 0);
    cr_expect(strstr(err, "--ttl does not apply") != NULL, "%s", err);
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--ttl", "500ms"), 0, "%s", err);
    cr_expect_eq(o.ttl_s, 1);
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--ttl", "0"), 0, "%s", err);
    cr_expect_eq(o.ttl_s, 0);
}

/* Issue 28: following forks is asked for at attach only, off by default. */
Test(cli_options, follow_forks_is_attach_only)
{
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1"), 0, "%s", err);
    cr_expect(!o.follow_forks);
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--follow-forks"), 0, "%s", err);
    cr_expect(o.follow_forks);
    cr_expect_neq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--follow-forks"), 0);
    cr_expect_neq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "1", "--follow-forks"), 0);
}

/* --lazy-children says how forks are followed: with --children or
 * --follow-forks only, at attach only. */
Test(cli_options, lazy_children_with_following)
{
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--children", "--lazy-children"), 0, "%s", err);
    cr_expect(o.lazy_children && o.children);
    cr_assert_eq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--follow-forks", "--lazy-children"), 0, "%s", err);
    cr_expect(o.lazy_children && o.follow_forks);
    cr_expect_neq(PARSE(CLI_CMD_ATTACH, "attach", "-p", "1", "--lazy-children"), 0);
    cr_expect(strstr(err, "--children or --follow-forks") != NULL, "%s", err);
    cr_expect_neq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1", "--children", "--lazy-children"), 0);
}

Test(cli_output, series_file_names)
{
    char b[256];
    cr_expect_str_eq(cli_output_series_path(b, sizeof(b), "prof.json", 1, "json"), "prof.0001.json");
    cr_expect_str_eq(cli_output_series_path(b, sizeof(b), "prof", 12, "json"), "prof.0012.json");
    cr_expect_str_eq(cli_output_series_path(b, sizeof(b), "/tmp/x.pb.gz", 3, "pprof"), "/tmp/x.0003.pb.gz");
    cr_expect_str_eq(cli_output_series_path(b, sizeof(b), "report.txt", 2, "text"), "report.0002.txt");
}

Test(cli_options, mode_is_octal_private_by_default)
{
    cr_assert_eq(PARSE(CLI_CMD_PROFILE, "heapinject", "-p", "1"), 0, "%s", err);
    cr_expect_eq(o.mode, 0600);
    cr_assert_eq(PARSE(CLI_CMD_REPORT, "report", "f.json", "--mode", "0644"), 0, "%s", err);
    cr_expect_eq(o.mode, 0644);
    cr_assert_eq(PARSE(CLI_CMD_CENSUS, "census", "-p", "1", "--mode=640"), 0, "%s", err);
    cr_expect_eq(o.mode, 0640);
    const char *bad[] = { "999", "1777", "abc", "0x1ff", "", "-1" };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cr_expect_eq(PARSE(CLI_CMD_SNAPSHOT, "snapshot", "-p", "1", "--mode", (char *)bad[i]), -EINVAL, "%s", bad[i]);
        cr_expect(strstr(err, "--mode"), "%s", err);
    }
    cr_expect_eq(PARSE(CLI_CMD_DETACH, "detach", "-p", "1", "--mode", "0600"), -EINVAL, "detach writes no file");
}

/* The help's default is the default: both come from common/config.h's one
 * number, so the text cannot say 512K while the rate is something else. */
Test(cli_options, help_shows_the_default_rate)
{
    uint64_t v = 0;
    cr_assert_eq(cli_parse_size(HI_DEFAULT_RATE_TEXT, &v), 0);
    cr_expect_eq(v, HI_DEFAULT_RATE);
    for (int cmd = CLI_CMD_PROFILE; cmd <= CLI_CMD_ATTACH; cmd++) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        cli_options_help((enum cli_command)cmd, f);
        fclose(f);
        cr_expect(strstr(text, "(default " HI_DEFAULT_RATE_TEXT), "%s: %s", cli_command_name(cmd), text);
        free(text);
    }
}
