/* fuzz_client.c - libFuzzer harness for the cli's protocol decoder
 * (cli/link/client.c): the input is what a (hostile, broken or truncated) agent
 * sends; it goes through a socketpair into a real struct cli_client, which
 * runs a conversation chosen by the first byte:
 *   bit 0   skip HELLO (talk to an agent before the handshake)
 *   bit 1   WATCH first, then pump ticks
 *   bits 2-3  0: two snapshots, 1: snapshot + SET_RATE, 2: OWN_SESSION +
 *          snapshot + DETACH + wait for close, 3: pump until the end
 *          (ticks and pushed snapshots, SNAP_PUSH)
 * Every call must return 0 or a negative errno with an error message, and
 * every profile it hands out must be consistent; ASan/UBSan see the rest. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/link/client.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "invariant failed: %s\n", #x); abort(); } } while (0)

struct feed {
    int fd;
    const uint8_t *data;
    size_t len;
};

/* Writes the agent's bytes, then half-closes: the client sees EOF after. */
static void *feeder(void *arg)
{
    struct feed *f = arg;
    size_t off = 0;
    while (off < f->len) {
        ssize_t n = send(f->fd, f->data + off, f->len - off, MSG_NOSIGNAL);
        if (n <= 0)
            break; /* the client closed: fine */
        off += (size_t)n;
    }
    shutdown(f->fd, SHUT_WR);
    return NULL;
}

static void check_profile(const struct cli_profile *p)
{
    for (size_t i = 0; i < p->nstacks; i++) {
        CHECK(p->stacks[i].npcs <= HI_MAX_FRAMES);
        CHECK(!p->stacks[i].npcs || p->stacks[i].pcs);
    }
    CHECK(!p->maps_len || (p->maps && p->maps[p->maps_len] == '\0'));
    for (size_t i = 0; i < p->nthreads; i++)
        CHECK(strlen(p->threads[i].name) <= HI_THREAD_NAME_LEN);
}

static int call(struct cli_client *c, int rc)
{
    if (rc < 0)
        CHECK(c->error[0]);
    CHECK(rc <= 0);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    if (size < 1)
        return 0;
    uint8_t script = data[0];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        abort();
    struct feed f = { sv[1], data + 1, size - 1 };
    pthread_t th;
    if (pthread_create(&th, NULL, feeder, &f))
        abort();

    struct cli_client c;
    struct cli_profile p;
    cli_client_init(&c);
    c.timeout_ms = 2000; /* EOF comes at once; the bound only guards a bug */
    if (cli_client_use_fd(&c, sv[0]) < 0)
        abort();
    int rc = 0;
    if (!(script & 1))
        rc = call(&c, cli_client_hello(&c));
    if (!rc && (script & 2))
        rc = call(&c, cli_client_watch(&c));
    switch ((script >> 2) & 3) {
    case 0:
        for (int i = 0; i < 2 && !rc; i++) {
            rc = call(&c, cli_client_snapshot(&c, &p));
            if (!rc) {
                check_profile(&p);
                CHECK(cli_client_copy_ticks(&c, &p) == 0);
                cli_profile_free(&p);
            } else {
                CHECK(p.nstacks == 0 && p.stacks == NULL);
            }
        }
        break;
    case 1:
        if (!rc && !(rc = call(&c, cli_client_snapshot(&c, &p)))) {
            check_profile(&p);
            cli_profile_free(&p);
        }
        if (!rc)
            rc = call(&c, cli_client_set_rate(&c, 4096));
        break;
    case 2:
        if (!rc)
            rc = call(&c, cli_client_own_session(&c));
        if (!rc && !(rc = call(&c, cli_client_snapshot(&c, &p)))) {
            check_profile(&p);
            cli_profile_free(&p);
        }
        if (!rc)
            rc = call(&c, cli_client_detach(&c));
        if (!rc)
            call(&c, cli_client_wait_closed(&c, 2000));
        break;
    default:
        for (int i = 0; i < 1000; i++) {
            int r = cli_client_pump(&c, 100);
            CHECK(r <= 2); /* 2: a snapshot the agent pushed (SNAP_PUSH) */
            if (r < 0)
                CHECK(c.error[0]);
            if (r <= 0)
                break;
        }
        break;
    }
    /* A pushed snapshot, read by any of the calls above, is whole. */
    struct hi_snap_push why;
    if (cli_client_take_pushed(&c, &p, &why)) {
        check_profile(&p);
        cli_profile_free(&p);
    }
    CHECK(c.nticks <= CLI_CLIENT_MAX_TICKS);
    cli_client_close(&c); /* closes sv[0]: a blocked feeder gets EPIPE */
    pthread_join(th, NULL);
    close(sv[1]);
    return 0;
}
