// census_cxx - C++ objects of known types, before any attach: 50,000 live
// Session objects held in a global vector of pointers, 20,000 Request
// objects created and their pointers dropped (leaked). Prints "ready";
// on SIGUSR1 checks every Session ("verify ok" / "verify BAD"). g_cache
// points to a Cache object that alone holds 100 pages of 10,000 bytes.
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

struct Base {
    virtual ~Base() {}
    virtual long id() const = 0;
};

struct Session : Base {
    long n;
    char name[40];
    explicit Session(long i) : n(i) { std::memset(name, 'S', sizeof(name)); }
    long id() const override { return n; }
};

struct Request : Base {
    long n;
    char body[100];
    explicit Request(long i) : n(i) { std::memset(body, 'R', sizeof(body)); }
    long id() const override { return n; }
};

struct Cache : Base {
    std::vector<char *> pages;
    long id() const override { return 0; }
};

std::vector<Base *> *g_sessions;
Cache *g_cache;
static volatile sig_atomic_t want_verify;

static void on_usr1(int) { want_verify = 1; }

int main()
{
    std::signal(SIGUSR1, on_usr1);
    g_cache = new Cache();
    for (int i = 0; i < 100; i++) {
        g_cache->pages.push_back(new char[10000]);
        std::memset(g_cache->pages.back(), 'C', 10000);
    }
    g_sessions = new std::vector<Base *>();
    g_sessions->reserve(50000);
    for (long i = 0; i < 70000; i++) {
        if (i % 7 < 5)
            g_sessions->push_back(new Session(i));
        else
            new Request(i); // leaked on purpose
    }
    std::printf("truth sessions=%zu requests=20000 session_size=%zu request_size=%zu\n", g_sessions->size(),
                sizeof(Session), sizeof(Request));
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) {
        timespec ts = { 0, 50 * 1000 * 1000 };
        nanosleep(&ts, nullptr);
        if (want_verify) {
            bool good = g_sessions->size() == 50000;
            for (Base *b : *g_sessions)
                good = good && dynamic_cast<Session *>(b) && static_cast<Session *>(b)->name[39] == 'S';
            std::printf("verify %s\n", good ? "ok" : "BAD");
            std::fflush(stdout);
            want_verify = 0;
        }
    }
}
