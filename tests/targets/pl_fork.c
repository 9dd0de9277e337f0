/* pl_fork.c - fork while attached.
 *   fork N   a background thread allocates without pause while the main
 *            thread forks N children; each child allocates and frees from
 *            two threads (its hooks must be plain forwards: no agent, no
 *            locks a vanished thread may hold), checks it has no agent
 *            thread, forks a grandchild, exits 0. Prints "done fork ok=K".
 *   run      fork_parent_alloc: 100 x 300 B kept, after the forks.
 *   keep     forks one child that allocates (as above) and then stays,
 *            sleeping, until killed: prints "kept child PID". Its GOT is
 *            looked at from outside while the parent is still attached.
 */
#include <dirent.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pl_common.h"

static volatile int churning;
static void *kept[100];

static void *churn(void *arg)
{
    (void)arg;
    while (churning) {
        void *p[64];
        for (int i = 0; i < 64; i++)
            p[i] = malloc((size_t)(16 + i * 8));
        for (int i = 0; i < 64; i++)
            free(p[i]);
    }
    return NULL;
}

static void *child_churn(void *arg)
{
    (void)arg;
    for (int r = 0; r < 2000; r++) {
        void *p = malloc((size_t)(r % 512 + 1));
        p = realloc(p, 1000);
        free(p);
    }
    return NULL;
}

static int count_agent_threads(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[300], name[64] = "";
        snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(name, sizeof(name), f) && strncmp(name, "heapinject", 10) == 0)
            n++;
        fclose(f);
    }
    if (d)
        closedir(d);
    return n;
}

static int child_main(int depth)
{
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        if (pthread_create(&t[i], NULL, child_churn, NULL) != 0)
            return 2;
    child_churn(NULL);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    if (count_agent_threads() != 0)
        return 3;
    if (depth == 0) {
        pid_t g = fork();
        if (g == 0)
            _exit(child_main(1));
        int st;
        if (g < 0 || waitpid(g, &st, 0) != g || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            return 4;
    }
    return 0;
}

__attribute__((noinline)) void fork_parent_alloc(void)
{
    for (int i = 0; i < 100; i++)
        kept[i] = malloc(300);
}

static int handle(const char *cmd, const char *arg)
{
    if (strcmp(cmd, "fork") == 0) {
        int n = atoi(arg), ok = 0;
        pthread_t bg;
        churning = 1;
        pthread_create(&bg, NULL, churn, NULL);
        for (int i = 0; i < n; i++) {
            fflush(stdout);
            pid_t c = fork();
            if (c == 0)
                _exit(child_main(0));
            int st;
            if (c > 0 && waitpid(c, &st, 0) == c && WIFEXITED(st) && WEXITSTATUS(st) == 0)
                ok++;
            else if (c > 0)
                pl_say("child %d status %d", c, st);
        }
        churning = 0;
        pthread_join(bg, NULL);
        pl_say("agent threads in parent: %d", count_agent_threads());
        pl_say("done fork ok=%d", ok);
    } else if (strcmp(cmd, "keep") == 0) {
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            child_churn(NULL);
            for (;;)
                pause();
        }
        pl_say("kept child %d", (int)c);
    } else if (strcmp(cmd, "run") == 0) {
        fork_parent_alloc();
        pl_say("truth fork_parent_alloc alloc_objs=100 alloc_bytes=30000 live_objs=100 live_bytes=30000");
        pl_say("done run");
    } else if (strcmp(cmd, "free") == 0) {
        for (int i = 0; i < 100; i++)
            free(kept[i]);
        pl_say("done free");
    } else {
        return -1;
    }
    return 0;
}

int main(void)
{
    return pl_serve(handle);
}
