/* cli_link_client_fixture.h - a fake agent on a socketpair for the
 * unit tests of the cli's protocol client (cli_target_client.c,
 * cli_target_client_push.c): setup/teardown for the suite, and put/msg to
 * send what an agent would (or would not). Included once per test file. */
#ifndef HI_TESTS_UNIT_CLI_TARGET_CLIENT_FIXTURE_H
#define HI_TESTS_UNIT_CLI_TARGET_CLIENT_FIXTURE_H

#include <criterion/criterion.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/link/client.h"

static int agent_fd;
static struct cli_client c;

static void setup(void)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    cli_client_init(&c);
    c.timeout_ms = 2000;
    cr_assert_eq(cli_client_use_fd(&c, sv[0]), 0);
    agent_fd = sv[1];
}

static void teardown(void)
{
    cli_client_close(&c);
    if (agent_fd >= 0)
        close(agent_fd);
}

static void put(const void *data, size_t len)
{
    const char *p = data;
    while (len) {
        ssize_t n = write(agent_fd, p, len);
        cr_assert(n > 0, "fake agent write failed");
        p += n;
        len -= (size_t)n;
    }
}

static void msg(uint16_t type, const void *body, uint32_t len)
{
    struct hi_msg_header h = { HI_PROTO_MAGIC, HI_PROTO_VERSION, type, len };
    put(&h, sizeof(h));
    if (len)
        put(body, len);
}

#endif /* HI_TESTS_UNIT_CLI_TARGET_CLIENT_FIXTURE_H */
