/* payload_config.c - the settings string heapinject_start() parses
 * (common/config.c, linked into the payload). */
/* Covers: common/config.c */
#include <criterion/criterion.h>
#include <string.h>

#include "common/config.h"
#include "common/proto.h"

Test(config, defaults)
{
    struct hi_config c;
    cr_assert_eq(hi_config_parse("sock=/tmp/x/1.sock", &c), 0);
    cr_expect_eq(c.version, HI_PROTO_VERSION);
    cr_expect_eq(c.rate, HI_DEFAULT_RATE);
    cr_expect_eq(c.ttl_s, HI_DEFAULT_TTL_S);
    cr_expect_eq(c.tick_ms, HI_DEFAULT_TICK_MS);
    cr_expect_str_eq(c.sock, "/tmp/x/1.sock");
}

Test(config, all_keys_and_unknown_ignored)
{
    struct hi_config c;
    cr_assert_eq(hi_config_parse("  v=1 rate=1 ttl=0 tick_ms=10 future=yes sock=/a/b  ", &c), 0);
    cr_expect_eq(c.rate, 1);
    cr_expect_eq(c.ttl_s, 0);
    cr_expect_eq(c.tick_ms, 10);
    cr_expect_str_eq(c.sock, "/a/b");
}

/* The injector appends "uffd=1" after the sock key when the filters in
 * force allow the agent's userfaultfd (injector/inject.c, run_calls). */
Test(config, uffd_after_sock)
{
    struct hi_config c;
    cr_assert_eq(hi_config_parse("v=1 rate=1 sock=/a/b", &c), 0);
    cr_expect_eq(c.uffd, 0);
    cr_assert_eq(hi_config_parse("v=1 rate=1 sock=/a/b uffd=1", &c), 0);
    cr_expect_eq(c.uffd, 1);
    cr_expect_str_eq(c.sock, "/a/b");
    cr_expect_eq(hi_config_parse("sock=/a/b uffd=2", &c), -1);
}

Test(config, rejects_bad_values)
{
    struct hi_config c;
    const char *bad[] = {
        NULL, "", "rate=1", "sock=relative", "sock=", "rate=0 sock=/a", "rate=-1 sock=/a",
        "rate=12x sock=/a", "tick_ms=5 sock=/a", "tick_ms=60001 sock=/a", "v=0 sock=/a",
        "noequals sock=/a", "rate=99999999999999999999 sock=/a",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        cr_expect_eq(hi_config_parse(bad[i], &c), -1, "accepted: %s", bad[i] ? bad[i] : "(null)");
    char longp[300] = "sock=/";
    memset(longp + 6, 'a', 200);
    longp[206] = '\0';
    cr_expect_eq(hi_config_parse(longp, &c), -1);
}

Test(config, format_round_trip)
{
    struct hi_config a, b;
    cr_assert_eq(hi_config_parse("rate=4096 ttl=7 tick_ms=250 sock=/run/hi/9.sock", &a), 0);
    char buf[256];
    cr_assert_eq(hi_config_format(&a, buf, sizeof(buf)), 0);
    cr_assert_eq(hi_config_parse(buf, &b), 0);
    cr_expect_eq(memcmp(&a, &b, sizeof(a)), 0);
    cr_expect_eq(hi_config_format(&a, buf, 20), -1);
}

/* Issue 16: the snapshots at a fatal signal and at memory pressure are off
 * unless the cli asks (only the one-shot session does), and go round trip. */
Test(config, crash_and_pressure_snapshots)
{
    struct hi_config c, d;
    char buf[256];
    cr_assert_eq(hi_config_parse("sock=/a", &c), 0);
    cr_expect_eq(c.crash, 0);
    cr_expect_eq(c.pressure, 0);
    cr_assert_eq(hi_config_parse("crash=1 pressure=1 sock=/a", &c), 0);
    cr_expect_eq(c.crash, 1);
    cr_expect_eq(c.pressure, 1);
    cr_expect_eq(hi_config_parse("crash=2 sock=/a", &c), -1);
    cr_expect_eq(hi_config_parse("pressure=x sock=/a", &c), -1);
    cr_assert_eq(hi_config_parse("crash=1 sock=/a", &c), 0);
    cr_assert_eq(hi_config_format(&c, buf, sizeof(buf)), 0);
    cr_expect(strstr(buf, "crash=1") != NULL, "%s", buf);
    cr_expect(strstr(buf, "pressure") == NULL, "%s", buf);
    cr_assert_eq(hi_config_parse(buf, &d), 0);
    cr_expect_eq(d.crash, 1);
    cr_expect_eq(d.pressure, 0);
}

/* Issue 28: forks followed and the last snapshot at exit are off unless the
 * cli asks (attach --follow-forks; every attach), and go round trip. */
Test(config, follow_and_last)
{
    struct hi_config c, d;
    char buf[256];
    cr_assert_eq(hi_config_parse("sock=/a", &c), 0);
    cr_expect_eq(c.follow, 0);
    cr_expect_eq(c.last, 0);
    cr_expect_eq(hi_config_parse("follow=3 sock=/a", &c), -1);
    cr_expect_eq(hi_config_parse("last=2 sock=/a", &c), -1);
    cr_expect_eq(hi_config_parse("last= sock=/a", &c), -1);
    cr_assert_eq(hi_config_parse("follow=1 sock=/a", &c), 0);
    cr_expect_eq(c.follow, 1);
    cr_expect_eq(c.last, 0);
    cr_assert_eq(hi_config_format(&c, buf, sizeof(buf)), 0);
    cr_expect(strstr(buf, "follow=1") != NULL, "%s", buf);
    cr_expect(strstr(buf, "last") == NULL, "%s", buf);
    c.last = 1;
    cr_assert_eq(hi_config_format(&c, buf, sizeof(buf)), 0);
    cr_assert_eq(hi_config_parse(buf, &d), 0);
    cr_expect_eq(d.follow, 1);
    cr_expect_eq(d.last, 1);
}

/* follow=2: children followed lazily (attach --lazy-children); its value
 * goes round trip, not as 1. */
Test(config, follow_lazy)
{
    struct hi_config c, d;
    char buf[256];
    cr_assert_eq(hi_config_parse("follow=2 sock=/a", &c), 0);
    cr_expect_eq(c.follow, HI_FOLLOW_LAZY);
    cr_assert_eq(hi_config_format(&c, buf, sizeof(buf)), 0);
    cr_expect(strstr(buf, "follow=2") != NULL, "%s", buf);
    cr_assert_eq(hi_config_parse(buf, &d), 0);
    cr_expect_eq(d.follow, HI_FOLLOW_LAZY);
}

/* "gate": what the filters at attach allow of a sealed agent's calls
 * (the injector adds it); absent is "not known", not "none allowed". */
Test(config, gate_known_or_not)
{
    struct hi_config c;
    cr_assert_eq(hi_config_parse("sock=/a", &c), 0);
    cr_expect_eq(c.gate_known, 0);
    cr_assert_eq(hi_config_parse("sock=/a gate=0", &c), 0);
    cr_expect_eq(c.gate_known, 1);
    cr_expect_eq(c.gate, 0);
    cr_assert_eq(hi_config_parse("sock=/a uffd=1 gate=127", &c), 0);
    cr_expect_eq(c.gate_known, 1);
    cr_expect_eq(c.gate, 127);
    cr_expect_eq(c.uffd, 1);
    cr_expect_eq(hi_config_parse("sock=/a gate=x", &c), -1);
    cr_expect_eq(hi_config_parse("sock=/a gate=4294967296", &c), -1);
}
