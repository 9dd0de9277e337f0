// cli_cxx - a C++ target for the cli's tests: it leaks std::vector buffers
// from a member function in a namespace, so a report must show demangled
// names (cache::Store::remember(unsigned long)). Prints "ready"; runs until
// SIGTERM.
#include <csignal>
#include <cstdio>
#include <ctime>
#include <vector>

namespace cache {
class Store {
public:
    // The leak: entries are kept forever.
    void remember(unsigned long key)
    {
        entries_.push_back(new std::vector<char>(4096 + key % 1024, 'x'));
    }
    std::size_t size() const { return entries_.size(); }

private:
    std::vector<std::vector<char> *> entries_;
};
} // namespace cache

static volatile std::sig_atomic_t stop;
static void on_term(int) { stop = 1; }

int main()
{
    std::signal(SIGTERM, on_term);
    cache::Store store;
    std::printf("ready\n");
    std::fflush(stdout);
    for (unsigned long i = 0; !stop; i++) {
        store.remember(i);
        if (i % 64 == 0) {
            timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, nullptr);
        }
    }
    std::printf("entries=%zu\n", store.size());
    return 0;
}
